"""Calibration of the checkpoint table's significance tiers (backend/analysis/tiers.py, `analyze
checkpoints`, the Checkpoints page): how often sweeps where every checkpoint is alike are split into
more than one tier (the family-wise false separation, against its nominal 5 %), and how often a
planted trend along α is found, at 12 and 40 problems, n = 16 samples per cell, α = −0.5 … 1.5 in
steps of 0.25 (the findings bench's grid).

The worlds (per problem p, base solve rate u_p ~ U(0.3, 0.8); at each α a cell's outcomes are one
multinomial draw of n = 16 over correct / optimization / correctness failure, half of the failures
optimization), built as the `Outcomes` that `analyze` reads from the store:
- identical: every α alike (the findings bench's identical world): any checkpoint below tier 1 is a
  false separation;
- alpha-trend: the solve rate rises logit-linearly along α, logit u_p + 0.3·α (at u = 0.5: 0.46 at
  α = −0.5, 0.61 at α = 1.5): power is the share of worlds where α = −0.5 is split off tier 1, and
  the table also counts how often the truly best, α = 1.5, stays in tier 1.

Beside the tool's test, the same worlds are tiered the naive way (Holm across the checkpoints, each
tested against the observed best alone), which tiers.py's docstring says is far above its level.

For bench/findings_calibration.py's world families: `tier_split(o)` is the tool's test on any
world's `Outcomes` (its identical world's false separation), `tier_split(o, only=0)` its power on a
planted world (checkpoint 0 split off); `identical_world` and `trend_world` build this bench's
worlds, `evaluate(kind, problems, seed)` returns {test name: shown} for either kind, and
`TIER_TESTS` describes each row in that bench's columns (name, estimator, interval, null, nominal,
null world, planted world).

    PYTHONPATH=$PWD .venv/bin/python bench/tier_calibration.py [--runs 2000]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy.special import expit, logit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.alpha import alpha_label
from backend.analysis.frame import Outcomes, point_kind
from backend.analysis.tiers import beats_p, holm_adjusted, tiers
from backend.outcomes import OutcomeClass

ALPHAS = np.round(np.arange(-0.5, 1.51, 0.25), 2)
N = 16
SIZES = (12, 40)
TREND = 0.3  # the planted logit slope of the solve rate along α
KINDS = ("identical", "alpha-trend")  # a world's seed is its kind's place here
TIERS = "checkpoint tiers: any split off tier 1"
NAIVE = "naive tiers (against the observed best alone), not the tool's"
BEST_KEPT = "checkpoint tiers: the truly best (α=1.5) in tier 1"
# (name, estimator, interval / decision, null, nominal, null world, planted world): the findings bench's columns
TIER_TESTS = [
    (TIERS, "per-problem pass@1, every pair of checkpoints",
     "one-sided paired t over problems, min over the others × (m − 1), Holm across the m checkpoints",
     "identical (no difference)", 0.05, "identical", "alpha-trend"),
    (NAIVE, "per-problem pass@1, the observed best against each other", "one-sided paired t, Holm",
     "identical (no difference)", 0.05, "identical", "alpha-trend"),
]  # fmt: skip


def _outcomes(solve: np.ndarray, rng: np.random.Generator) -> Outcomes:
    problems = solve.shape[0]
    probs = np.stack([solve, (1 - solve) / 2, (1 - solve) / 2], axis=-1)
    counts = rng.multinomial(N, probs)
    labels, alphas = [alpha_label(x) for x in ALPHAS], [float(x) for x in ALPHAS]
    names = [f"p{i}" for i in range(problems)]
    classes = {
        OutcomeClass.CORRECT: counts[..., 0],
        OutcomeClass.OPTIMIZATION_FAILURE: counts[..., 1],
        OutcomeClass.CORRECTNESS_FAILURE: counts[..., 2],
        OutcomeClass.FORMAT_FAILURE: np.zeros_like(counts[..., 0]),
    }
    kinds = [point_kind("merged", a) for a in alphas]
    return Outcomes(
        names, names, [None] * problems, labels, labels, alphas, kinds, np.full(counts.shape[:2], N), classes
    )


def identical_world(problems: int, rng: np.random.Generator) -> Outcomes:
    """Every α alike: the null of the tiers."""
    u = rng.uniform(0.3, 0.8, (problems, 1))
    return _outcomes(np.broadcast_to(u, (problems, len(ALPHAS))), rng)


def trend_world(problems: int, rng: np.random.Generator) -> Outcomes:
    """The solve rate rising along α, logit u_p + TREND·α: the planted effect."""
    u = rng.uniform(0.3, 0.8, (problems, 1))
    return _outcomes(expit(logit(u) + TREND * ALPHAS[None, :]), rng)


def tier_split(o: Outcomes, only: int | None = None) -> bool:
    """The tool's tiers on one world's Outcomes (any world of the findings bench will do): whether any
    checkpoint is split off tier 1 (a false separation where all are alike), or checkpoint `only`."""
    t = tiers(np.where(o.n > 0, o.correct / np.maximum(o.n, 1), np.nan))
    return bool((t.tier > 1).any() if only is None else t.tier[only] > 1)


def evaluate(kind: str, problems: int, seed: int) -> dict[str, bool]:
    """{test name: whether it shows} for one world: any split off tier 1 (the tool's tiers and the
    naive ones) and, in the trend world, α = −0.5 split off and whether the truly best stays in tier 1."""
    rng = np.random.default_rng(seed)
    o = (identical_world if kind == "identical" else trend_world)(problems, rng)
    rates = o.correct / o.n
    if kind == "identical":
        return {TIERS: tier_split(o), NAIVE: naive_split(rates)}
    return {  # power: the worst (α = −0.5) split off tier 1
        TIERS: tier_split(o, only=0),
        NAIVE: naive_split(rates, only=0),
        BEST_KEPT: bool(tiers(rates).tier[-1] == 1),
    }


def naive_split(rates: np.ndarray, only: int | None = None, level: float = 0.05) -> bool:
    """Holm across the checkpoints, each against the observed best alone: whether it splits any (or `only`)."""
    best = int(np.argmax(rates.mean(axis=0)))
    others = [c for c in range(rates.shape[1]) if c != best]
    adjusted = holm_adjusted(np.array([beats_p(rates)[best, c] for c in others]))
    split = {c for c, a in zip(others, adjusted, strict=True) if a <= level}
    return bool(split) if only is None else only in split


def wilson(hits: int, total: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a proportion (the Monte-Carlo error of a rate measured in `total` runs)."""
    p = hits / total
    centre = (p + z * z / (2 * total)) / (1 + z * z / total)
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / (1 + z * z / total)
    return max(0.0, centre - half), min(1.0, centre + half)


def run(runs: int, sizes=SIZES) -> dict[tuple[str, int], list[dict]]:
    return {
        (kind, p): [evaluate(kind, p, 1_000_003 * i + 7919 * p + 31 * k) for i in range(runs)]
        for k, kind in enumerate(KINDS)
        for p in sizes
    }


def rows(results: dict, sizes=SIZES) -> tuple[list[str], list[str]]:
    """docs/findings.md's table rows for the tiers, and those above their level beyond Monte-Carlo error."""
    lines, above = [], []
    for name, estimator, interval, null, nominal, null_world, planted_world in TIER_TESTS:
        cells = [name, estimator, interval, null, f"{nominal:.1%}"]
        for p in sizes:
            hits = sum(r[name] for r in results[null_world, p])
            total = len(results[null_world, p])
            lo, hi = wilson(hits, total)
            cells.append(f"{hits / total:.1%} [{lo:.1%}, {hi:.1%}] ({hits}/{total})")
            if lo > nominal and name == TIERS:
                above.append(f"{name} at {p} problems")
        cells += [f"{np.mean([r[name] for r in results[planted_world, p]]):.2f}" for p in sizes]
        lines.append("| " + " | ".join(cells) + " |")
    return lines, above


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2000, help="worlds per kind and size")
    args = parser.parse_args(argv)
    start = time.monotonic()
    print(f"tier calibration: {args.runs} worlds per kind and size, {SIZES} problems, n = {N}, {len(ALPHAS)} α")
    results = run(args.runs)
    lines, above = rows(results)
    print("\n".join(lines))
    for p in SIZES:
        kept = np.mean([r[BEST_KEPT] for r in results["alpha-trend", p]])
        print(f"{BEST_KEPT}, alpha-trend, {p} problems: {kept:.3f}")
    print(f"runtime: {time.monotonic() - start:.0f} s")
    if above:
        print("ABOVE NOMINAL (Wilson lower bound above the level): " + "; ".join(above))
    return 1 if above else 0


if __name__ == "__main__":
    sys.exit(main())
