"""One experiment's view in a database of many: the read model's build and the Frontier's first
render on a fresh server, for this tree and for a baseline tree (today's code, `git archive`d from
--baseline-rev) in the same run, on the same file, with the row groups each outcome query reads;
this tree's first render in a returning browser (`Returning`); and the floor's: the same figures
on a page with nothing else (FLOOR_APP).

The data is SYNTHETIC (pseudo-random outcomes, `build`), fit for timing only: --experiments sweeps
whose ids share their first 15 characters, as real ones do ("sweep-20250601-…"), --rows judged
samples in all, 20 checkpoints × problems × 250 samples each, made inside DuckDB (1 M rows in
about 2.5 s of CPU).

    .venv/bin/python bench/dashboard_speed.py --rows 50000000 [--db /tmp/flab-dashboard-bench.duckdb]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from backend.alpha import alpha_label  # noqa: E402
from backend.outcomes import OutcomeClass  # noqa: E402
from backend.records import Checkpoint, Experiment, Problem  # noqa: E402
from backend.store import Store, _insert  # noqa: E402

CKPTS, SAMPLES = 20, 250
DONE = "document.querySelector('.stApp')?.getAttribute('data-test-script-state') === 'notRunning'"
FLOOR = "floor: charts only"  # the printed name of the floor's page (FLOOR_APP)
RETURNING = "this tree, returning browser"  # this tree, in a browser that has opened it before
PAGES = {"frontier": 4, "churn": 1, "passk": 1}  # the result pages and their charts
BASELINE_REV = "e466110"  # the tree issue #48 started from: outcome queries on the experiment id alone

# Run in a fresh interpreter inside either tree: the parts of one experiment's view the result pages
# draw (outcomes, frontier table, tiers, churn order and statistics, pools), timed, and the row
# groups of `evaluations` the outcome query reads (DuckDB's own profile).
VIEW = """
import json, sys, time, duckdb
sys.path.insert(0, ".")
db, exp, profile = sys.argv[1:4]
real = duckdb.connect
def profiled(*a, **k):
    con = real(*a, **k)
    con.execute("PRAGMA enable_profiling = 'json'")
    con.execute(f"PRAGMA profiling_output = '{profile}'")
    return con
duckdb.connect = profiled
from backend.store import Store
try:
    from backend.store_queries import EVERY_SAMPLE
    from dashboard.experiment_view import ExperimentView, stamp
except ImportError:  # the baseline: one cached call per part (dashboard/data.py), the same functions
    ExperimentView = None
    from backend.analysis.churn import churn_stats, order_problems
    from backend.analysis.ensembles import gain_ks, greedy_pool, standard_pools
    from backend.analysis.frame import to_outcomes
    from backend.analysis.frontier import frontier_table, optimization_by_tier
started = time.perf_counter()
if ExperimentView is None:
    store = Store(db, migrate=False)
    o = to_outcomes(store.outcome_counts(exp))
    query, stamped = time.perf_counter() - started, None
    scans = open(profile).read()
    frontier_table(o); optimization_by_tier(store.optimization_tiers(exp)); order_problems(o); churn_stats(o)
    standard_pools(o, 1); greedy_pool(o, gain_ks(o)[-1])
else:
    at = stamp(db, exp)  # the view's key: a query the baseline has no counterpart of
    stamped = time.perf_counter() - started
    v = ExperimentView(db, exp, EVERY_SAMPLE, at)
    query = time.perf_counter() - started - stamped
    scans = open(profile).read()
    v.frontier(); v.tiers(); v.order(); v.churn(0.5); v.pools()
print(json.dumps({"query": query, "stamp": stamped, "view": time.perf_counter() - started,
                  "profile": json.loads(scans)}))
"""

# The floor: Streamlit's frontend and plotly.js drawing this tree's Frontier figures of the same
# experiment on a page that holds nothing else (no sidebar, controls, tables or queries), served
# the same way. No change to the page's own work can take its first render below this on the host.
FIGURES = """
import pathlib, sys
sys.path.insert(0, ".")
import plotly.io as pio
from backend.store_queries import EVERY_SAMPLE
from dashboard.experiment_view import ExperimentView, stamp
from dashboard.figures import Selection, frontier_figures
db, exp, out = sys.argv[1:4]
v = ExperimentView(db, exp, EVERY_SAMPLE, stamp(db, exp))
for i, (name, (fig, _)) in enumerate(frontier_figures(v, Selection(exp=exp)).items()):
    pathlib.Path(out, f"{i}-{name}.json").write_text(pio.to_json(fig, validate=False))
"""
FLOOR_APP = """
import pathlib, sys
import plotly.io as pio
import streamlit as st
st.set_page_config(layout="wide")
for path in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    fig = pio.from_json(path.read_text())
    st.plotly_chart(fig, width="content" if fig.layout.width else "stretch", key=path.stem)
"""


def experiment_ids(count: int) -> list[str]:
    return [f"sweep-20250601-{i:06d}" for i in range(count)]


# One judged sample per row of range(checkpoints × problems × samples), in that order, for one
# experiment ($exp); $alphas lists the checkpoints' α. Every random draw is a hash of the sample's ids
# and a salt, scaled to [0, 1): the same file on every run, and no Python object per row.
ROWS = """
WITH grid AS (
    SELECT r // ($problems * {samples}) AS c, (r // {samples}) % $problems AS p, r % {samples} AS sample_idx
    FROM range($problems * {checkpoints} * {samples}) t(r)
), drawn AS (
    SELECT c, p, sample_idx,
           -- skill, one per (experiment, checkpoint, problem): Kumaraswamy(1.2, 2), by its inverse CDF
           pow(1 - sqrt(1 - (hash($exp, c, p, 'skill') >> 11) / 9007199254740992.0), 1 / 1.2) AS skill,
           greatest(0.05, least(0.95, 0.7 - 0.3 * $alphas[c + 1])) AS opt,
           (hash($exp, c, p, sample_idx, 'u') >> 11) / 9007199254740992.0 AS u,
           hash($exp, c, p, sample_idx, 'v') AS v
    FROM grid
), judged AS (
    SELECT *, CASE WHEN u < skill THEN '{ok}'
                   WHEN u < skill + (1 - skill) * 0.9 * opt THEN '{optimization}'
                   WHEN u < 0.97 THEN '{correctness}' ELSE '{format}' END AS outcome
    FROM drawn
)
SELECT $exp AS experiment_id, printf('c%02d', c) AS checkpoint_id, printf('syn/p%05d', p) AS problem_id,
       sample_idx::INTEGER AS sample_idx, outcome,
       CASE outcome WHEN '{ok}' THEN 'AC'
                    WHEN '{optimization}' THEN CASE WHEN v % 5 = 0 THEN 'MLE' ELSE 'TLE' END
                    WHEN '{correctness}' THEN CASE WHEN v % 4 = 0 THEN 'RE' ELSE 'WA' END
                    ELSE CASE WHEN v % 2 = 0 THEN 'CE' ELSE 'FORMAT' END END AS verdict,
       CASE outcome WHEN '{optimization}' THEN 3 + (v >> 8) % 4          -- tiers 3..6: large inputs
                    WHEN '{correctness}' THEN 1 + (v >> 8) % 6 END::INTEGER AS first_failing_tier,
       CASE outcome WHEN '{ok}' THEN 6 WHEN '{format}' THEN 0
                    ELSE first_failing_tier - 1 END::INTEGER AS highest_tier_passed
FROM judged
"""
COLUMNS = [
    "experiment_id",
    "checkpoint_id",
    "problem_id",
    "sample_idx",
    "outcome",
    "verdict",
    "first_failing_tier",
    "highest_tier_passed",
]


def build(db: Path, rows: int, experiments: int) -> None:
    """The SYNTHETIC file: `experiments` sweeps of CKPTS checkpoints (α evenly from -1 to 2) ×
    rows // (experiments × CKPTS × SAMPLES) problems × SAMPLES samples, written one experiment after
    another (as a real database fills), each in checkpoint, problem, sample order. A sample is
    correct with its problem's skill at that checkpoint (Kumaraswamy(1.2, 2), close to a Beta(1.2, 2):
    mean 0.385), else an optimization failure with probability 0.9 × clip(0.7 − 0.3 α, 0.05, 0.95),
    else a correctness failure below u = 0.97, else a format failure. Verdicts: AC; TLE (MLE one in
    5); WA (RE one in 4); CE or FORMAT, half each. First failing tier: 3–6 for an optimization
    failure, 1–6 for a correctness failure, uniform; highest tier passed 6 when correct, 0 for a
    format failure, else the first failing tier less one. The rows are made inside DuckDB (one
    INSERT … SELECT per experiment, the store's derived experiment key included)."""
    problems = max(1, rows // (experiments * CKPTS * SAMPLES))
    store = Store(db)
    alphas = [round(float(a), 3) for a in np.linspace(-1.0, 2.0, CKPTS)]
    store.put(
        [
            Checkpoint(id=f"c{i:02d}", path="-", kind="merged", alpha=a, label=alpha_label(a))
            for i, a in enumerate(alphas)
        ]
    )
    store.put(
        [
            Problem(
                id=f"syn/p{p:05d}",
                bench="syn",
                title=f"p{p}",
                statement="-",
                difficulty=("easy", "medium", "hard")[p % 3],
            )
            for p in range(problems)
        ]
    )
    classes = {"ok": OutcomeClass.CORRECT, "format": OutcomeClass.FORMAT_FAILURE}
    classes |= {"optimization": OutcomeClass.OPTIMIZATION_FAILURE, "correctness": OutcomeClass.CORRECTNESS_FAILURE}
    select = ROWS.format(samples=SAMPLES, checkpoints=CKPTS, **classes)
    for exp in experiment_ids(experiments):
        store.put([Experiment(id=exp, kind="sweep", name=f"synthetic {exp}", note="SYNTHETIC: timing only")])
        with store.transaction() as con:
            con.execute(
                _insert("INSERT", "evaluations", COLUMNS, f"({select})"),
                {"exp": exp, "problems": problems, "alphas": alphas},
            )


def baseline_tree(rev: str) -> Path:
    tree = Path(tempfile.gettempdir()) / f"flab-baseline-{rev}"
    if not tree.is_dir():
        tree.mkdir()
        archive = subprocess.run(["git", "archive", rev], cwd=ROOT, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def row_groups(profile: dict) -> tuple[int, int]:
    found = []

    def walk(op):
        if op.get("type") == "TABLE_SCAN" and op.get("extra_info", {}).get("Table", "").endswith(".evaluations"):
            found.append((op["row_groups_scanned"], op["total_row_groups_to_scan"]))
        for child in op.get("children", []):
            walk(child)

    for op in profile["operator"]:
        walk(op)
    return tuple(map(sum, zip(*found, strict=True)))


def view_build(tree: Path, db: Path, exp: str) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".json") as profile:
        out = subprocess.run(
            [sys.executable, "-c", VIEW, str(db), exp, profile.name],
            cwd=tree,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    result = json.loads(out.strip().splitlines()[-1])
    result["row_groups"] = row_groups(result.pop("profile"))
    return result


def healthy(url: str) -> bool:
    try:
        return urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).read() == b"ok"
    except OSError:
        return False


def free_port(first: int = 0) -> int:
    """A port free now: any (first = 0), or the first free one from `first` up. A port kept for a
    later round is taken below the ephemeral range, where outgoing connections do not land."""
    for port in range(first, first + 1000) if first else [0]:
        with socket.socket() as s, contextlib.suppress(OSError):
            s.bind(("127.0.0.1", port))
            return s.getsockname()[1]
    raise RuntimeError(f"no free port in {first}-{first + 999}")


@dataclass(frozen=True)
class Returning:
    """A browser that has opened the dashboard before, as a user's does after `make run` is
    restarted: its profile (HTTP cache of Streamlit's immutable bundles, V8's code cache) and the
    port it opened it on (both caches are kept per origin)."""

    profile: Path
    port: int


@contextlib.contextmanager
def served(tree: Path, db: Path, floor: Path | None = None, port: int | None = None):
    """The dashboard as `make run` serves it, from `tree`, on `db`; yields its URL, the seconds
    from the server's launch until it answers its health check (this tree loads the pages' modules
    before it listens: dashboard/serve.py) and the launched process's id. With `floor` (a folder of
    figures), the floor's page instead, served by the same script."""
    port = port or free_port()
    env = {**os.environ, "FLAB_DB": str(db), "PORT": str(port), "HOST": "127.0.0.1", "PY": sys.executable}
    env.pop("FLAB_TOKEN", None)
    command = ["scripts/run_dashboard.sh"]
    if floor:
        (floor / "floor_app.py").write_text(FLOOR_APP)
        env["APP"], command = str(floor / "floor_app.py"), [*command, "--", str(floor)]
    launched = time.perf_counter()
    proc = subprocess.Popen(command, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        while not healthy(url):  # a niced server on a loaded host took over a minute to start
            if time.perf_counter() - launched > 600 or proc.poll() is not None:
                raise RuntimeError(f"the dashboard from {tree} did not answer its health check")
            time.sleep(0.2)
        yield url, time.perf_counter() - launched, proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:  # a server busy with its warm-up on a loaded host was left running
            proc.kill()
            proc.wait(10)


@contextlib.contextmanager
def browser_page(profile: Path | None = None):
    """A page in a fresh Chromium, with a new profile or with `profile` (a returning browser)."""
    from playwright.sync_api import sync_playwright

    options = dict(
        executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
    )
    viewport = {"width": 1400, "height": 1000}
    with sync_playwright() as p:
        if profile:
            browser = p.chromium.launch_persistent_context(profile, viewport=viewport, **options)
            yield browser.new_page()
        else:
            browser = p.chromium.launch(**options)
            yield browser.new_page(viewport=viewport)
        browser.close()


def settle(page, plots: int) -> None:
    page.wait_for_function(f"document.querySelectorAll('.js-plotly-plot').length >= {plots}", timeout=300000)
    page.wait_for_function(DONE, timeout=300000)


def tree_cpu(root: int, holding: str = "") -> float:
    """CPU seconds (user + system) so far of `root` and its living descendants whose command line
    holds `holding`: the server's processes, or the bench's own Chromium (other sessions on the
    machine run browsers too)."""
    top = psutil.Process(root)
    total = 0.0
    for proc in (top, *top.children(recursive=True)):
        with contextlib.suppress(psutil.Error):  # a process may end while it is read
            if holding in " ".join(proc.cmdline()):
                times = proc.cpu_times()
                total += times.user + times.system
    return total


def loop_ms() -> float:
    """Milliseconds for a fixed pure-Python loop (3 M additions, best of 3): the host's speed at
    that moment, printed beside the load average. On the shared development machine the same loop
    took 63-107 ms within one hour, and the same page's render moved with it."""
    best = float("inf")
    for _ in range(3):
        start, total = time.perf_counter(), 0
        for i in range(3_000_000):
            total += i
        best = min(best, time.perf_counter() - start)
    return best * 1000


def floor_figures(db: Path, exp: str, out: Path) -> Path:
    """This tree's Frontier figures of `exp`, as the page draws them, written into `out` (the floor's folder)."""
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-c", FIGURES, str(db), exp, str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        env={**os.environ, "FLAB_DB": str(db)},
    )
    return out


def first_render(
    tree: Path, db: Path, exp: str, plots: int = 4, floor: Path | None = None, returning: Returning | None = None
) -> dict:
    """A fresh server, a fresh browser (or a returning one), the Frontier's URL first: seconds until its charts are
    drawn and its script has finished (`render`), the CPU seconds the server and the bench's Chromium spent
    meanwhile (`server_cpu`, `browser_cpu`: far less sensitive to the machine's load than the wall
    time), the seconds the server took to start, the 1-minute load average and the host's speed
    (`loop_ms`, just before)."""
    speed = loop_ms()  # before the server and Chromium start, which would compete with it
    port, profile = (returning.port, returning.profile) if returning else (None, None)
    with served(tree, db, floor, port) as (url, started, server), browser_page(profile) as page:
        load = os.getloadavg()[0]
        me, server0 = os.getpid(), tree_cpu(server)
        browser0 = tree_cpu(me, "chromium")
        start = time.perf_counter()
        page.goto(url if floor else f"{url}/frontier?exp={exp}")
        settle(page, plots)  # every chart drawn: this tree's Frontier has four, the baseline's three
        render = time.perf_counter() - start
        return dict(
            render=render,
            server_cpu=tree_cpu(server) - server0,
            browser_cpu=tree_cpu(me, "chromium") - browser0,
            started=started,
            load=load,
            speed=speed,
        )


def page_renders(db: Path, exp: str) -> list[tuple[str, float, float]]:
    """This tree's pages after the Overview has been drawn (the app's first session, as after `make
    run`): each page's URL until drawn, then a filter change to a value already seen (cached)."""
    rows = []
    with served(ROOT, db) as (url, _, _), browser_page() as page:
        page.goto(url)
        settle(page, 0)
        for name, plots in PAGES.items():
            start = time.perf_counter()
            page.goto(f"{url}/{name}?exp={exp}")
            settle(page, plots)
            first, times = time.perf_counter() - start, []
            for value in ("hard", "all", "hard"):  # the last two changes hit the cache
                start = time.perf_counter()
                page.get_by_role("combobox").nth(1).click()
                page.get_by_role("option", name=value, exact=True).click()
                page.wait_for_timeout(50)
                settle(page, plots)
                times.append(time.perf_counter() - start)
            rows.append((name, first, times[-1]))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=5_000_000, help="judged samples in the file, all experiments")
    parser.add_argument("--experiments", type=int, default=10)
    parser.add_argument("--db", default="/tmp/flab-dashboard-bench.duckdb")
    parser.add_argument("--baseline-rev", default=BASELINE_REV)
    parser.add_argument("--baseline-charts", type=int, default=3, help="charts on the baseline's Frontier (e466110: 3)")
    parser.add_argument("--no-browser", action="store_true", help="the view build only (no server, no Chromium)")
    parser.add_argument("--rounds", type=int, default=1, help="first renders per tree, the trees alternating")
    parser.add_argument(
        "--pages", action="store_true", help="also this tree's pages after the Overview, and cached changes"
    )
    args = parser.parse_args()
    db = Path(args.db)
    if not db.exists():
        started = time.perf_counter()
        build(db, args.rows, args.experiments)
        print(f"built {db} ({db.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - started:.0f} s")
    with Store(db, migrate=False).connect(read_only=True) as con:
        total = con.execute("SELECT count(*) FROM evaluations").fetchone()[0]
    exp = experiment_ids(args.experiments)[args.experiments // 2]  # one in the middle of the file
    trees = {  # name: (tree, the charts its Frontier draws)
        "this tree": (ROOT, 4),
        f"baseline {args.baseline_rev}": (baseline_tree(args.baseline_rev), args.baseline_charts),
    }
    print(f"SYNTHETIC: {total:,} judged samples in {args.experiments} experiments; the view of {exp}")
    for name, (tree, _) in trees.items():
        v = view_build(tree, db, exp)
        stamp = f" (its stamp query included: {v['stamp']:.2f} s)" if v["stamp"] else ""
        print(
            f"  {name:<28} outcome query {v['query']:5.2f} s, row groups read {v['row_groups'][0]} of "
            f"{v['row_groups'][1]}; view build {v['view']:5.2f} s{stamp} (target < 5 s)",
            flush=True,
        )
    with tempfile.TemporaryDirectory(prefix="flab-bench-") as folder:
        runs = {name: functools.partial(first_render, tree, db, exp, charts) for name, (tree, charts) in trees.items()}
        if not args.no_browser:
            returning = Returning(Path(folder, "profile"), free_port(20000))
            for _ in range(2):  # Chromium keeps a script's compiled code from its second load on
                first_render(ROOT, db, exp, returning=returning)
            runs[RETURNING] = functools.partial(first_render, ROOT, db, exp, returning=returning)
            floor = floor_figures(db, exp, Path(folder, "floor"))
            runs[FLOOR] = functools.partial(first_render, ROOT, db, exp, floor=floor)
        renders = {name: [] for name in runs}
        for _ in range(0 if args.no_browser else args.rounds):
            for name, run in runs.items():
                r = run()
                renders[name].append(r["render"])
                target = "" if name == FLOOR else " (target < 3 s)"
                print(
                    f"  {name:<28} Frontier first render {r['render']:5.2f} s{target}; CPU during it: "
                    f"Chromium {r['browser_cpu']:5.2f} s, server {r['server_cpu']:5.2f} s; server start "
                    f"{r['started']:5.2f} s; load average {r['load']:.1f}, loop {r['speed']:.0f} ms",
                    flush=True,
                )
    for name, times in renders.items():
        if times:
            print(f"  {name:<28} median first render {statistics.median(times):5.2f} s over {len(times)} rounds")
    if args.pages and not args.no_browser:
        for name, first, cached in page_renders(db, exp):
            print(f"  {name:<9} after the Overview: first render {first:5.2f} s, cached filter change {cached:5.2f} s")


if __name__ == "__main__":
    main()
