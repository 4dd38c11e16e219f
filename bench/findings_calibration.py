"""Calibration of every test the tool reports: its false-positive rate under simulated null worlds
(with a Wilson 95 % Monte-Carlo interval) against its nominal level, and its power under planted
effects, at 12 and 40 problems, n = 16 samples per cell, α = −0.5 … 1.5 in steps of 0.25.

Each world is an `Outcomes`, the object `analyze` builds from the store, and each test is the
project's own function at its defaults (findings.check_frontier / check_extrapolation /
check_churn, ensembles.gain_table, trend.trend, recovery.recovery, churn.churn_stats, and the
lab's pre-registered difference-in-differences did.difference_in_differences): their
bootstrap replicates are the tool's own (2,000 for F1, F2 and the trend, 1,000 for the gain table
and recovery); the no-churn sweeps of F3 and the churn excess are the tool's 500 unless
--null-replicates lowers them (docs/findings.md's run: 200, 5.5 minutes with 4 workers on the idle
2-core machine; at 500, F3 is about half of the run's time). Progress goes to stdout; with --log
each world's result is kept, and a stopped run resumes.

The worlds (per problem p, base solve rate u_p ~ U(0.3, 0.8); at each α a cell's outcomes are one
multinomial draw of n = 16 over correct / optimization / correctness failure):
- identical: every α alike (solve u_p, half of the failures optimization): the null of F1's two
  directions, F3, the gain table and F4, the trend's slopes and the churn excess; F1's flat solve
  rate holds exactly, its planted effect;
- frontier+churn: the optimization share of failures falls logit-linearly from 0.7 at α = 0 to 0.3
  at α = 1 and on beyond, and each problem's solve rate swings along α around its own best α
  (logit u_p + 1.5·sin(π·α/2 + φ_p)): the planted effect of those tests;
- solve+margin: the solve rate 0.10 higher at α ≥ 1 than at α ≤ 0 (linear between): the null of
  F1's equivalence part (a difference exactly at the margin);
- f2-null: a strong frontier inside [0, 1] (share 0.8 → 0.2) that stops at the endpoints, the solve
  rate 0.10 worse beyond them, and an independent checkpoint drawn from α = 0.5's own rates: the
  null of F2's four parts and of recovery;
- f2-planted: the frontier goes on beyond the endpoints at a flat solve rate, and the independent
  checkpoint sits 0.15 off the curve in the (optimization, correctness) plane (both shares +0.106);
- did-planted: the first half of the problems (T2's "withheld" set; the second half is "kept") has
  frontier+churn's falling optimization share without its churn, the second half is identical: the
  planted effect of T2 (correctness failures rise by about 0.18 more on the first half). T2's null
  is the identical world split the same way.

    PYTHONPATH=$PWD .venv/bin/python bench/findings_calibration.py [--runs 1000] [--quick] [--workers 2]
        [--null-replicates 500] [--log results.jsonl]
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.special import expit, logit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.alpha import alpha_label
from backend.analysis.churn import churn_stats
from backend.analysis.did import difference_in_differences, endpoint_change
from backend.analysis.ensembles import gain_table, standard_pools
from backend.analysis.findings import FindingsSpec, check_churn, check_extrapolation, check_frontier
from backend.analysis.frame import Outcomes, point_kind
from backend.analysis.recovery import recovery
from backend.analysis.trend import trend
from backend.outcomes import OutcomeClass

ALPHAS = np.round(np.arange(-0.5, 1.51, 0.25), 2)
N = 16
SIZES = (12, 40)
F4_K = 4  # FindingsSpec.ensemble_k_fraction × the measuring half's 8 samples: F4 is the gain table's row here
OFF_CURVE = 0.15 / math.sqrt(2)  # each share's shift: 0.15 away from the curve, perpendicular to it
# A world's seed is its kind's place here, so a new kind goes last: the earlier rows stay reproducible.
WORLDS = ("f2-null", "f2-planted", "frontier+churn", "identical", "solve+margin", "did-planted")
T2 = "T2 difference-in-differences (lab)"


@dataclass(frozen=True)
class Test:
    name: str
    estimator: str
    interval: str
    null: str
    nominal: float
    null_world: str
    planted_world: str


ABOVE_0 = "95 % t over problems (bootstrap se), lower > 0"
EXCLUDES_0 = "95 % t over problems (bootstrap se), excludes 0"
# fmt: off
TESTS = [
    Test("F1 optimization failures fall", "opt(0) − opt(1), mean share over problems", ABOVE_0,
         "identical", 0.025, "identical", "frontier+churn"),
    Test("F1 correctness failures rise", "corr(1) − corr(0)", ABOVE_0, "identical", 0.025,
         "identical", "frontier+churn"),
    Test("F1 solve rate flat", "solve(1) − solve(0)", "90 % t over problems inside ±0.10 (TOST)",
         "true difference +0.10 (at the margin)", 0.05, "solve+margin", "identical"),
    Test("F2 opt share more extreme at α=−0.5", "opt/(opt+corr) at −0.5 minus at 0", ABOVE_0,
         "share stops at the endpoint", 0.025, "f2-null", "f2-planted"),
    Test("F2 opt share more extreme at α=1.5", "at 1 minus at 1.5", ABOVE_0,
         "share stops at the endpoint", 0.025, "f2-null", "f2-planted"),
    Test("F2 solve not worse at α=−0.5", "solve(−0.5) − solve(0)", "90 % t over problems, lower > −0.10",
         "true difference −0.10 (at the margin)", 0.05, "f2-null", "f2-planted"),
    Test("F2 solve not worse at α=1.5", "solve(1.5) − solve(1)", "90 % t over problems, lower > −0.10",
         "true difference −0.10 (at the margin)", 0.05, "f2-null", "f2-planted"),
    Test("F3 churn", "union − best single, cross-fitted halves, minus the null mean",
         "above the no-churn null's 95th pct",
         "identical (no churn)", 0.05, "identical", "frontier+churn"),
    *[Test(f"gain table, {pool}, k={k}" + (" (= F4)" if k == F4_K else ""), "pool − per-k best single, cross-fitted",
           "estimate ± t·bootstrap sd (re-chosen per replicate), lower > 0", "identical", 0.025, "identical",
           "frontier+churn") for pool in ("all interpolated", "interpolated + extrapolated") for k in range(1, 8)],
    Test("trend slope, optimization share", "least-squares slope on α", EXCLUDES_0,
         "identical", 0.05, "identical", "frontier+churn"),
    Test("trend slope, correctness share", "least-squares slope on α", EXCLUDES_0,
         "identical", 0.05, "identical", "frontier+churn"),
    Test("recovery: off the curve", "distance to the interpolation polyline",
         "90 % t CI not inside 0.141 (10 points per share), and above its parametric null's 95th pct",
         "checkpoint drawn from α=0.5's rates", 0.05, "f2-null", "f2-planted"),
    Test("churn excess (union_excess)", "union − best single − null mean",
         "95 % parametric (null) interval, excludes 0",
         "identical (no churn)", 0.05, "identical", "frontier+churn"),
    Test(T2, "corr(1) − corr(0) on the first half of the problems minus on the second",
         "95 % Welch t over problems, lower > 0", "identical (no difference)", 0.025, "identical", "did-planted"),
]
# fmt: on


def falling_share(a: np.ndarray, at_0: float, at_1: float) -> np.ndarray:
    """A share moving logit-linearly from `at_0` at α = 0 to `at_1` at α = 1, and on past them."""
    return expit(logit(at_0) + a * (logit(at_1) - logit(at_0)))


def world(kind: str, problems: int, rng: np.random.Generator) -> Outcomes:
    """One simulated sweep of `kind` (see the module's docstring), as the CLI's `Outcomes`."""
    u = rng.uniform(0.3, 0.8, problems)[:, None]
    a = ALPHAS[None, :]
    opt_share = np.full(a.shape, 0.5)
    solve = np.broadcast_to(u, (problems, len(ALPHAS))).copy()
    independent = None
    if kind == "frontier+churn":
        opt_share = falling_share(a, 0.7, 0.3)
        solve = expit(logit(u) + 1.5 * np.sin(np.pi / 2 * a + rng.uniform(0, 2 * np.pi, (problems, 1))))
    elif kind == "solve+margin":
        solve = u + 0.10 * np.clip(a, 0, 1)
    elif kind == "did-planted":
        withheld = np.arange(problems)[:, None] < problems // 2
        opt_share = np.where(withheld, falling_share(a, 0.7, 0.3), 0.5)
    elif kind in ("f2-null", "f2-planted"):
        inside = np.clip(a, 0, 1) if kind == "f2-null" else a
        opt_share = falling_share(inside, 0.8, 0.2)
        if kind == "f2-null":
            solve = solve - 0.10 * ((a < 0) | (a > 1))
        mid = int(np.flatnonzero(ALPHAS == 0.5)[0])
        independent = np.stack(
            [solve[:, mid], (1 - solve[:, mid]) * opt_share[0, mid], (1 - solve[:, mid]) * (1 - opt_share[0, mid])],
            axis=-1,
        )
        if kind == "f2-planted":  # off the curve, perpendicular to it: fewer solved, more of both failures
            independent = independent + np.array([-2 * OFF_CURVE, OFF_CURVE, OFF_CURVE])
    probs = np.stack([solve, (1 - solve) * opt_share, (1 - solve) * (1 - opt_share)], axis=-1)
    labels, alphas = [alpha_label(x) for x in ALPHAS], [float(x) for x in ALPHAS]
    if independent is not None:
        probs = np.concatenate([probs, independent[:, None, :]], axis=1)
        labels, alphas = [*labels, "independent"], [*alphas, None]
    counts = rng.multinomial(N, probs)
    names = [f"p{i}" for i in range(problems)]
    kinds = [point_kind("merged" if x is not None else "trained", x) for x in alphas]
    classes = {
        OutcomeClass.CORRECT: counts[..., 0],
        OutcomeClass.OPTIMIZATION_FAILURE: counts[..., 1],
        OutcomeClass.CORRECTNESS_FAILURE: counts[..., 2],
        OutcomeClass.FORMAT_FAILURE: np.zeros_like(counts[..., 0]),
    }
    return Outcomes(
        names, names, [None] * problems, labels, labels, alphas, kinds, np.full(counts.shape[:2], N), classes
    )


def evaluate(kind: str, problems: int, seed: int, null_replicates: int = 500) -> dict[str, bool | None]:
    """{test name: whether it shows (None: not tested)} for the tests this world is the null or the
    planted effect of. `null_replicates`: the no-churn sweeps F3 and the churn excess simulate."""
    o = world(kind, problems, np.random.default_rng(seed))
    out: dict[str, bool | None] = {}
    if kind in ("identical", "did-planted"):  # T2's null and planted worlds, its halves the two sets
        half = problems // 2
        did = difference_in_differences(endpoint_change(o, o.problems[:half]), endpoint_change(o, o.problems[half:]))
        out[T2] = did.status == "shows"
    if kind == "did-planted":
        return out
    spec = FindingsSpec(seed=seed, null_replicates=null_replicates)
    f1 = check_frontier(o, spec)
    for part, test in zip(f1.parts, TESTS[:3], strict=True):
        out[test.name] = part.status == "shows"
    if kind in ("f2-null", "f2-planted"):
        f2 = check_extrapolation(o, spec, f1)
        names = [t.name for t in TESTS[3:7]]  # parts come as (opt, solve) per side, α < 0 first
        shown = {p.name: p.status == "shows" for p in f2.parts}
        ordered = list(shown.values()) if len(shown) == 4 else [None] * 4
        for name, value in zip((names[0], names[2], names[1], names[3]), ordered, strict=True):
            out[name] = value
        rows = recovery(o, seed=seed)
        out["recovery: off the curve"] = rows[0]["status"] == "shows"
        out["recovery status"] = rows[0]["status"]
        return out
    if kind == "solve+margin":
        return out
    out["F3 churn"] = check_churn(o, spec).status == "shows"
    gains = gain_table(o, standard_pools(o), seed=seed)
    for row in gains.filter(gains["pool"] != "best single").iter_rows(named=True):
        out[f"gain table, {row['pool']}, k={row['k']}" + (" (= F4)" if row["k"] == F4_K else "")] = row["gain_lo"] > 0
    for s in trend(o, seed=seed)["slopes"]:
        name = "optimization" if s["class"] == OutcomeClass.OPTIMIZATION_FAILURE else "correctness"
        out[f"trend slope, {name} share"] = not s["slope_lo"] <= 0 <= s["slope_hi"]
    excess = churn_stats(o, seed=seed, null_replicates=null_replicates)["union_excess"]
    out["churn excess (union_excess)"] = not excess["lo"] <= 0 <= excess["hi"]
    return out


def _job(args: tuple[str, int, int, int]) -> tuple[str, int, int, dict]:
    kind, problems, seed, null_replicates = args
    return kind, problems, seed, evaluate(kind, problems, seed, null_replicates)


def wilson(hits: int, total: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a proportion: Monte-Carlo error of a rate measured in `total` runs."""
    if not total:
        return math.nan, math.nan
    p = hits / total
    centre = (p + z * z / (2 * total)) / (1 + z * z / total)
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / (1 + z * z / total)
    return max(0.0, centre - half), min(1.0, centre + half)


def run(runs: int, workers: int, sizes=SIZES, progress=print, null_replicates: int = 500, log: Path | None = None):
    """{(kind, problems): [result dict per run]} over every world kind and size. Runs go in rounds
    (every kind and size once per round), so a run stopped early has as many runs of each; with
    `log`, each world's result is appended to it as one JSON line, and worlds already there are
    not run again (a stopped run resumes)."""
    assert {t.null_world for t in TESTS} | {t.planted_world for t in TESTS} == set(WORLDS)
    results: dict = defaultdict(list)
    done_seeds = set()
    if log and log.exists():
        for line in log.read_text().splitlines():
            kind, p, seed, out = json.loads(line)
            if p in sizes and seed not in done_seeds:
                results[kind, p].append(out)
                done_seeds.add(seed)
    jobs = [
        (kind, p, 1_000_003 * i + 7919 * p + 31 * k, null_replicates)
        for i in range(runs)
        for k, kind in enumerate(WORLDS)
        for p in sizes
    ]
    jobs = [j for j in jobs if j[2] not in done_seeds]
    start = time.monotonic()
    with (
        multiprocessing.Pool(workers) if workers > 1 else _Inline() as pool,
        log.open("a") if log else _Inline() as out,
    ):
        for done, (kind, p, seed, result) in enumerate(pool.imap_unordered(_job, jobs, chunksize=4), 1):
            results[kind, p].append(result)
            if log:
                out.write(json.dumps([kind, p, seed, result]) + "\n")
                out.flush()
            if done % max(1, len(jobs) // 50) == 0 or done == len(jobs):
                progress(f"  {done}/{len(jobs)} worlds, {time.monotonic() - start:.0f} s")
    return results


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


def rate(results: list[dict], name: str) -> tuple[int, int]:
    """(runs where the test showed, runs where it was tested)."""
    values = [r.get(name) for r in results]
    tested = [v for v in values if v is not None]
    return sum(tested), len(tested)


def table(results: dict, sizes=SIZES) -> tuple[str, list[str]]:
    """The markdown table, and the tests whose false-positive rate is above their nominal level
    beyond Monte-Carlo error (the Wilson interval's lower bound above the level)."""
    head = ["test", "estimator", "interval / decision", "null", "nominal"]
    head += [f"FPR {p} problems [95 % MC]" for p in sizes] + [f"power {p}" for p in sizes]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    above = []
    for t in TESTS:
        cells = [t.name, t.estimator, t.interval, t.null, f"{t.nominal:.1%}"]
        for p in sizes:
            hits, total = rate(results[t.null_world, p], t.name)
            lo, hi = wilson(hits, total)
            cells.append(f"{hits / max(total, 1):.1%} [{lo:.1%}, {hi:.1%}] ({hits}/{total})")
            if total and lo > t.nominal:
                above.append(f"{t.name} at {p} problems")
        for p in sizes:
            hits, total = rate(results[t.planted_world, p], t.name)
            cells.append(f"{hits / max(total, 1):.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines), above


def recovery_statuses(results: dict, sizes=SIZES) -> str:
    """How often each recovery status came out, on the curve (f2-null) and 0.15 off it (f2-planted)."""
    lines = []
    for kind in ("f2-null", "f2-planted"):
        for p in sizes:
            statuses = [r["recovery status"] for r in results[kind, p]]
            counts = {s: statuses.count(s) for s in ("shows", "does_not_show", "underpowered", "not_tested")}
            lines.append(f"recovery, {kind}, {p} problems: {counts}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000, help="worlds per kind and size (null and planted)")
    parser.add_argument("--quick", action="store_true", help="100 worlds per kind and size")
    parser.add_argument("--workers", type=int, default=2, help="processes")
    parser.add_argument(
        "--null-replicates",
        type=int,
        default=500,
        help="no-churn sweeps per F3 test and churn excess (the tool's default: 500)",
    )
    parser.add_argument("--log", type=Path, help="append each world's result here (JSON lines); resume from it")
    args = parser.parse_args(argv)
    runs = 100 if args.quick else args.runs
    start = time.monotonic()
    print(
        f"findings calibration: {runs} worlds per kind and size, {SIZES} problems, n = {N}, {args.workers} workers, "
        f"{args.null_replicates} no-churn sweeps per F3 and churn-excess test"
    )
    results = run(runs, args.workers, null_replicates=args.null_replicates, log=args.log)
    text, above = table(results)
    print(text)
    print(recovery_statuses(results))
    print(f"runtime: {time.monotonic() - start:.0f} s")
    # a claim about the nominal level needs enough runs to tell; --quick prints, it does not judge
    if above:
        print("ABOVE NOMINAL (Wilson lower bound above the level): " + "; ".join(above))
    return 1 if above and not args.quick else 0


if __name__ == "__main__":
    sys.exit(main())
