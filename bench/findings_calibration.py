"""Calibration of every test the tool reports, across world families and at the sizes studies
have: each test's false-positive rate in every family where its null holds, its power where an
effect is planted, and the coverage of the CIs over problems, at 12, 40 and 100 problems.

The families (the messy base every world shares, and what each moves along α) are in
bench/calibration_worlds.py; the tests, a registry of the project's own functions at their
defaults, in bench/calibration_tests.py (its docstring says how a test is added).

The rule. A row is RUNS worlds of one family and size (4,000: below; a family that is no test's
null, whose rows are power and coverage only, PLANTED_RUNS = 1,000); it fails when its
false-positive count is above the test's nominal level at a one-sided 1 % level: at least
`fail_at(nominal, N)`, the smallest count a Binomial(N, nominal) reaches with probability at most
1 %. The rule is simulated on itself (`rule_power`): at N = 2,000 it catches a true 3.5 % against
a nominal 2.5 % in only about two thirds of runs, at N = 4,000 in over 90 %, so the bench runs 4,000
worlds per row. A coverage row (a 95 % CI over problems; F1's flatness, 90 %) fails when its
measured coverage is more than one point below its level.

    PYTHONPATH=$PWD .venv/bin/python bench/findings_calibration.py [--runs 4000] [--workers 2]
        [--sizes 12,40,100] [--families a,b] [--log results.jsonl]

Progress goes to stdout; with --log each world's result is kept as a JSON line, and a stopped run
resumes where it stopped (runs go in rounds, every family and size once per round, so a run stopped
early has as many worlds of each). `--table-from LOG` runs nothing and prints the tables of the
worlds a log holds, the rule applied at the N it has (docs/findings.md's tables are a stopped run's,
so made). Each worker runs single-threaded BLAS: on a shared 2-core machine OpenBLAS's threads spun
for three times the CPU time.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import multiprocessing  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from scipy.stats import binom  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from calibration_tests import TESTS, Test  # noqa: E402
from calibration_worlds import FAMILIES, world  # noqa: E402

SIZES = (12, 40, 100)
RUNS = 4000
PLANTED_RUNS = 1000  # a family that is no test's null measures power (and coverage) only: ±0.03 at 1,000
LEVEL = 0.01  # the rule's one-sided level
COVERAGE_SLACK = 0.01  # a coverage row fails below its CI's level less this


def check_registry(tests: list[Test] = TESTS) -> None:
    """Every family a test names exists: a typo would measure nothing, silently."""
    named = {f for t in tests for f in (*t.nulls, *t.planted)}
    if not named <= set(FAMILIES):
        raise ValueError(f"tests name unknown families: {sorted(named - set(FAMILIES))}")


check_registry()


def evaluate(family: str, problems: int, run: int) -> dict[str, bool | None]:
    """{test name: shows (or covers)} for every test whose null, effect or coverage this family holds."""
    w = world(family, problems, run)
    out: dict[str, bool | None] = {}
    for t in TESTS:
        if family in t.nulls or family in t.planted:
            out[t.name] = t.run(w)
    if "recovery" in w.cache:
        out["recovery status"] = w.cache["recovery"][0]["status"]
    return out


def _job(args: tuple[str, int, int]) -> tuple[str, int, int, dict]:
    family, problems, run = args
    return family, problems, run, evaluate(family, problems, run)


def worlds_of(family: str, runs: int, planted_runs: int) -> int:
    """`runs` worlds for a family where some test's null holds (its false-positive rows need the
    rule's N), `planted_runs` for one that only plants effects."""
    nulls = {f for t in TESTS if t.kind == "test" for f in t.nulls}
    return runs if family in nulls else min(runs, planted_runs)


def run(
    runs: int,
    workers: int,
    sizes=SIZES,
    families=FAMILIES,
    progress=print,
    log: Path | None = None,
    planted_runs: int | None = None,
) -> dict:
    """{(family, problems): [result per world]}, resuming from `log` (JSON lines) when it exists."""
    planted_runs = runs if planted_runs is None else planted_runs
    results, done = read_log(log, runs, sizes, families) if log else (defaultdict(list), set())
    jobs = [
        (f, p, i)
        for i in range(runs)
        for f in families
        for p in sizes
        if i < worlds_of(f, runs, planted_runs) and (f, p, i) not in done
    ]
    start = time.monotonic()
    with (
        multiprocessing.Pool(workers) if workers > 1 else _Inline() as pool,
        log.open("a") if log else _Inline() as out,
    ):
        for count, (family, p, i, result) in enumerate(pool.imap_unordered(_job, jobs, chunksize=8), 1):
            results[family, p].append(result)
            out.write(json.dumps([family, p, i, result]) + "\n")
            if count % max(1, len(jobs) // 100) == 0 or count == len(jobs):
                out.flush()
                progress(
                    f"  {count}/{len(jobs)} worlds, {time.monotonic() - start:.0f} s, load {os.getloadavg()[0]:.1f}"
                )
    return results


def read_log(log: Path, runs: float = float("inf"), sizes=SIZES, families=FAMILIES) -> tuple[dict, set]:
    """({(family, problems): [result per world]}, {(family, problems, world)}) from a --log file,
    each world once. A run stopped mid-write leaves its last line torn: that world is run again."""
    results: dict = defaultdict(list)
    done: set = set()
    lines = log.read_text().splitlines() if log.exists() else []
    for number, line in enumerate(lines, 1):
        try:
            family, p, i, out = json.loads(line)
        except json.JSONDecodeError:
            if number == len(lines):
                break
            raise
        if family in families and p in sizes and i < runs and (family, p, i) not in done:
            results[family, p].append(out)
            done.add((family, p, i))
    return results, done


class _Inline:
    """A one-process stand-in for multiprocessing.Pool's imap_unordered (--workers 1), and a log that keeps nothing."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def imap_unordered(self, fn, jobs, chunksize=1):
        return map(fn, jobs)

    def write(self, text: str) -> None:
        pass

    def flush(self) -> None:
        pass


# -- the rule ------------------------------------------------------------------------------------


def fail_at(nominal: float, worlds: int, level: float = LEVEL) -> int:
    """The smallest count c with P(Binomial(worlds, nominal) ≥ c) ≤ level: a row with c or more
    positives is above its nominal rate at that one-sided level."""
    return int(binom.isf(level, worlds, nominal)) + 1


def rule_power(true: float, nominal: float, worlds: int, runs: int = 20_000, seed: int = 0) -> float:
    """By simulation: the share of `runs` rows of `worlds` worlds whose test's true false-positive
    rate is `true` that the rule fails."""
    counts = np.random.default_rng(seed).binomial(worlds, true, runs)
    return float((counts >= fail_at(nominal, worlds)).mean())


def rate(results: list[dict], name: str, gated: bool = False) -> tuple[int, int]:
    """(worlds where the test showed, or its CI covered; worlds where it was tested). A gated test
    (F2, tested only where F1's directions show) counts every world, one where it was not tested as
    not shown: what a user can see is F1 and then F2 showing, and a gatekeeping order holds that
    joint rate at the second test's level."""
    if gated:
        return sum(r.get(name) is True for r in results), len(results)
    tested = [r[name] for r in results if r.get(name) is not None]
    return sum(tested), len(tested)


def cell(hits: int, total: int) -> str:
    return f"{hits / max(total, 1):.2%} ({hits}/{total})" if total else "–"


# -- the tables ----------------------------------------------------------------------------------


def null_table(results: dict, sizes=SIZES) -> tuple[str, list[str]]:
    """Every test × every family where its null holds: the false-positive rate per size, and the
    rows the rule fails."""
    head = ["test", "decision", "nominal", "null family", *[f"FPR {p}" for p in sizes], "rule"]
    lines, failed = _head(head), []
    for t in (t for t in TESTS if t.kind == "test"):
        for family in t.nulls:
            cells, bad = [], []
            for p in sizes:
                hits, total = rate(results.get((family, p), []), t.name, t.gated)
                cells.append(cell(hits, total))
                if total and hits >= fail_at(t.nominal, total):
                    bad.append(str(p))
            failed += [f"{t.name} in {family} at {p} problems" for p in bad]
            verdict = "within" if not bad else "ABOVE at " + ", ".join(bad)
            lines.append(_row([t.name, t.decision, f"{t.nominal:.1%}", family, *cells, verdict]))
    return "\n".join(lines), failed


def power_table(results: dict, sizes=SIZES) -> str:
    head = ["test", "planted family", *[f"power {p}" for p in sizes]]
    lines = _head(head)
    for t in (t for t in TESTS if t.kind == "test"):
        for family in t.planted:
            shares = [rate(results.get((family, p), []), t.name, t.gated) for p in sizes]
            lines.append(_row([t.name, family, *[f"{h / n:.2f}" if n else "–" for h, n in shares]]))
    return "\n".join(lines)


def coverage_table(results: dict, sizes=SIZES) -> tuple[str, list[str]]:
    """Every interval × every family: its coverage per size, and the rows more than a point below
    its level. Such a row's misses are also held to the false-positive rule (at least
    `fail_at(1 − level, N)`): with a thousand worlds a CI exactly at its level falls a point short
    by chance in about one row in twelve (`coverage_chance`), the rule's count in one in a hundred."""
    head = ["interval", "family", "level", *[f"coverage {p}" for p in sizes], "rule"]
    lines, failed = _head(head), []
    for t in (t for t in TESTS if t.kind == "coverage"):
        for family in t.nulls:
            cells, bad, sure = [], [], []
            for p in sizes:
                hits, total = rate(results.get((family, p), []), t.name)
                cells.append(cell(hits, total))
                if total and hits / total < 1 - t.nominal - COVERAGE_SLACK:
                    bad.append(str(p))
                    if total - hits >= fail_at(t.nominal, total):
                        sure.append(str(p))
            failed += [f"{t.name} in {family} at {p} problems" for p in bad]
            verdict = "holds"
            if bad:
                above = ", ".join(sure) or "none"
                verdict = f"BELOW at {', '.join(bad)} (misses above {t.nominal:.0%} at the 1 % level: {above})"
            lines.append(_row([t.name, family, f"{1 - t.nominal:.0%}", *cells, verdict]))
    return "\n".join(lines), failed


def recovery_statuses(results: dict, sizes=SIZES) -> str:
    lines = []
    for family in ("f2-null", "f2-planted"):
        for p in sizes:
            statuses = [r.get("recovery status") for r in results.get((family, p), [])]
            counts = {s: statuses.count(s) for s in ("shows", "does_not_show", "underpowered", "not_tested")}
            lines.append(f"- recovery, {family}, {p} problems: {counts}")
    return "\n".join(lines)


def coverage_chance(level: float, worlds: int, slack: float = COVERAGE_SLACK) -> float:
    """The chance that a CI covering exactly at its level shows a coverage below level − slack in a
    row of `worlds` worlds: how often the coverage criterion fails a row that is right."""
    below = math.ceil(round((level - slack) * worlds, 9)) - 1  # the most covered worlds that fall short
    return float(binom.cdf(below, worlds, level))


def rule_lines(worlds: int) -> str:
    """The rule simulated on itself at N = 2,000, 4,000 and `worlds`: how often it fails a row at
    3.5 % against 2.5 %, and at exactly nominal; and how often the coverage criterion fails an exact CI."""
    lines = []
    for n in sorted({2000, RUNS, worlds}):
        lines.append(
            f"- N = {n}: a row fails at ≥ {fail_at(0.025, n)} of {n} (nominal 2.5 %) or ≥ {fail_at(0.05, n)} "
            f"(5 %); a true 3.5 % against 2.5 % is caught in {rule_power(0.035, 0.025, n):.1%} of 20,000 simulated "
            f"rows, a true 7 % against 5 % in {rule_power(0.07, 0.05, n):.1%}, and a test exactly at 2.5 % fails in "
            f"{rule_power(0.025, 0.025, n):.2%}; a 95 % CI that covers exactly 95 % falls below 94 % in "
            f"{coverage_chance(0.95, n):.1%} of rows"
        )
    return "\n".join(lines)


def worlds_run(results: dict) -> tuple[int, int]:
    """The fewest and the most worlds of any (family, size) row: what the rule is applied at."""
    counts = [len(r) for r in results.values()] or [0]
    return min(counts), max(counts)


def report(results: dict, sizes=SIZES, print=print) -> list[str]:
    """Print every table of the bench from `results`, and return the rows that fail the rule."""
    nulls, above = null_table(results, sizes)
    coverage, below = coverage_table(results, sizes)
    fewest, most = worlds_run(results)
    print(f"\n{fewest}–{most} worlds per family and size")
    print("\n## False-positive rates\n\n" + nulls)
    print("\n## Power\n\n" + power_table(results, sizes))
    print("\n## Coverage of the CIs over problems\n\n" + coverage)
    print("\n## Recovery's statuses\n\n" + recovery_statuses(results, sizes))
    print("\n## The rule, simulated\n\n" + rule_lines(fewest))
    for line in above + below:
        print(f"FAILS THE RULE: {line}")
    return above + below


def _head(cells: list[str]) -> list[str]:
    return [_row(cells), "|" + "---|" * len(cells)]


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=RUNS, help="worlds per family and size")
    parser.add_argument(
        "--planted-runs", type=int, default=PLANTED_RUNS, help="worlds of a family that is no test's null"
    )
    parser.add_argument("--workers", type=int, default=2, help="processes")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="problems per world, comma-separated")
    parser.add_argument("--families", default=",".join(FAMILIES), help="families to run, comma-separated")
    parser.add_argument("--log", type=Path, help="append each world's result here (JSON lines); resume from it")
    parser.add_argument(
        "--table-from", type=Path, metavar="LOG", help="run nothing: print the tables of the worlds a --log holds"
    )
    args = parser.parse_args(argv)
    sizes = tuple(int(s) for s in args.sizes.split(","))
    families = tuple(f for f in args.families.split(",") if f)
    unknown = set(families) - set(FAMILIES)
    if unknown:
        parser.error(f"unknown families {sorted(unknown)}; choose from {', '.join(FAMILIES)}")
    if args.table_from:
        if not args.table_from.is_file():
            parser.error(f"no log at {args.table_from}: give the file a run's --log wrote")
        results, _ = read_log(args.table_from, sizes=sizes, families=families)
        print(f"findings calibration: the tables of {args.table_from}")
        return 1 if report(results, sizes) else 0
    start, load = time.monotonic(), os.getloadavg()
    print(
        f"findings calibration: {args.runs} worlds per family and size ({args.planted_runs} of a family that is no "
        f"test's null), sizes {sizes}, {args.workers} workers"
    )
    results = run(args.runs, args.workers, sizes, families, log=args.log, planted_runs=args.planted_runs)
    failed = report(results, sizes)
    wall = time.monotonic() - start
    print(
        f"\nwall time {wall / 60:.1f} min; load average at start {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}, "
        f"at end {' / '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
