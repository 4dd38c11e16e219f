"""CLI start-up: wall time of `--help`, `sweep --help` and `db info` (a fresh temporary database)
against `python -c pass`, the interpreter's own start, all measured in the same run: the median of
N runs each, interleaved so that a burst of load on a shared machine hits every command alike. The
CPU time (user + system) of each run is printed beside it: on a machine that other work keeps busy,
wall time includes waiting for a core, CPU time much less so. A second reference, `typer floor`, is
the `--help` of a Typer app with a dozen empty commands: what Typer and its rich help renderer cost
before any command of ours is imported.

    .venv/bin/python bench/cli_startup.py [--runs 5]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TYPER_FLOOR = """
import typer
app = typer.Typer(help="twelve empty commands", no_args_is_help=True)
for i in range(12):
    app.command(f"command{i}", help=f"Command {i}.")(lambda: None)
app()
"""


def commands(db: Path) -> dict[str, list[str]]:
    py = sys.executable
    return {
        "python -c pass": [py, "-c", "pass"],
        "typer floor": [py, "-c", TYPER_FLOOR, "--help"],
        "--help": [py, "-m", "backend", "--help"],
        "sweep --help": [py, "-m", "backend", "sweep", "--help"],
        "db info": [py, "-m", "backend", "db", "info", "--db", str(db)],
    }


def cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run."""
    cpu, start = cpu_of_children(), time.perf_counter()
    subprocess.run(argv, cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - start, cpu_of_children() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cmds = commands(Path(tmp) / "bench.duckdb")
        for argv in cmds.values():  # warm the page cache and create the database: not what is timed
            timed(argv)
        runs: dict[str, list[tuple[float, float]]] = {name: [] for name in cmds}
        for _ in range(args.runs):
            for name, argv in cmds.items():
                runs[name].append(timed(argv))
    wall = {name: statistics.median(w for w, _ in r) for name, r in runs.items()}
    cpu = {name: statistics.median(c for _, c in r) for name, r in runs.items()}
    base = "python -c pass"
    print(f"median of {args.runs} runs each, interleaved; ratios are to `{base}` measured in this run")
    print(f"{'command':<16} {'wall':>8} {'ratio':>7} {'cpu':>8} {'ratio':>7}")
    for name in runs:
        print(
            f"{name:<16} {wall[name] * 1000:6.0f}ms {wall[name] / wall[base]:6.1f}x "
            f"{cpu[name] * 1000:6.0f}ms {cpu[name] / cpu[base]:6.1f}x"
        )


if __name__ == "__main__":
    main()
