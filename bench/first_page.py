"""A just-started server's first page on the committed miniature lab (what `make run` shows on a
fresh clone): the seconds from a fresh Chromium opening the dashboard's root URL (the Overview)
until its script has finished and its charts are drawn, for this tree and for a baseline tree
(`git archive` of --baseline-rev) in the same run, alternating, each round a fresh server and a
fresh browser. Prints each round, each tree's median and the ratio. Target: under 3 s (issue #57).
This tree's Overview opens without a chart (its glance and the lab's program styles are sections
opened on demand) and loads plotly.js after its script ends; the baseline's draws two charts, and
its clock stops at the first one drawn with its script ended.

    .venv/bin/python bench/first_page.py [--rounds 5] [--baseline-rev 68dfd60] [--this-rev HEAD]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from dashboard_speed import browser_page, loop_ms, served, settle  # noqa: E402

BASELINE_REV = "68dfd60"  # the tree issue #57 started from


def lab_db(folder: Path) -> Path:
    """A database holding the committed lab only, as `make run` imports it."""
    from backend.lab.artifacts import import_results
    from backend.store import Store

    db = folder / "lab.duckdb"
    import_results(Store(db))
    return db


def archived(rev: str, folder: Path) -> Path:
    """The files of commit `rev`, in a folder of their own."""
    tree = folder / f"tree-{rev}"
    tree.mkdir()
    archive = subprocess.run(["git", "archive", rev], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def first_page(tree: Path, db: Path, charts: int) -> tuple[float, float]:
    """(seconds until the Overview is drawn, seconds the server took to answer its health check)."""
    with served(tree, db) as (url, started, _), browser_page() as page:
        start = time.perf_counter()
        page.goto(url)
        settle(page, charts)
        return time.perf_counter() - start, started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline-rev", default=BASELINE_REV)
    parser.add_argument(
        "--this-rev", help="measure this commit rather than the working tree (which may change meanwhile)"
    )
    # the page's script finished and at least this many charts drawn: this tree's Overview opens
    # chart-free (its glance and the program styles wait in closed sections), the baseline's draws both
    parser.add_argument("--charts", type=int, default=0, help="charts this tree's first page draws at least")
    parser.add_argument("--baseline-charts", type=int, default=1, help="charts the baseline's draws at least")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="flab-first-page-") as tmp:
        folder = Path(tmp)
        db = lab_db(folder)
        ours = archived(args.this_rev, folder) if args.this_rev else ROOT
        trees = {"this tree": ours, f"baseline {args.baseline_rev}": archived(args.baseline_rev, folder)}
        charts = dict(zip(trees, (args.charts, args.baseline_charts), strict=True))
        times: dict[str, list[float]] = {name: [] for name in trees}
        print(f"the committed lab; {args.rounds} rounds, a fresh server and browser each; cores {os.cpu_count()}")
        for r in range(args.rounds):
            for name, tree in trees.items():
                speed = loop_ms()
                render, started = first_page(tree, db, charts[name])
                times[name].append(render)
                print(
                    f"  round {r + 1} {name:<18} first page {render:5.2f} s (server start {started:5.2f} s); "
                    f"load average {os.getloadavg()[0]:.1f}, loop {speed:.0f} ms",
                    flush=True,
                )
    medians = {name: statistics.median(t) for name, t in times.items()}
    for name, median in medians.items():
        print(f"{name:<20} median first page {median:5.2f} s over {args.rounds} rounds (target < 3 s)")
    ours, base = medians["this tree"], medians[f"baseline {args.baseline_rev}"]
    print(f"ratio this tree / baseline: {ours / base:.2f}")


if __name__ == "__main__":
    main()
