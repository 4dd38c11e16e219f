"""Churn beyond noise, one estimator (F3 in the findings, the excess on the Churn page and in
`analyze churn`): how many more problems the union of the α axis solves than the best single α,
with one interval over problems and the status that interval decides.

The statistic. Each cell's samples are split at random into a choosing half and a measuring half
(the measuring half the same size, h_p, in every cell of a problem: half of its smallest cell's
samples, so that a cell that lost samples to sandbox errors is not judged on fewer). On the
choosing half each problem picks its own best α; on the measuring half, X_p(α*) is 1 when that
choice solves the problem (≥ `solved_at` of the samples correct) and α* does not, −1 the other way
round, 0 otherwise, averaged over `splits` random splits. Σ_p X_p(α*) estimates how many more
problems the union of the axis solves than α* does. Chosen and measured on different samples,
it is not flattered by the choice.

The null, "no churn" as the finding states it: some single α* solves every problem at least as
often as any other α does (p_{p,α*} ≥ p_{p,α} for every problem p and α). There is then no
problem that the union solves and α* does not, and E[X_p(α*)] ≤ 0 for every problem whatever its
own choice was: a binomial tail is increasing in the rate, and both cells are measured on h_p
samples. Nothing about the shape of the curves enters: common peaks of any curvature, curves that
rise with α at different slopes, problems solved never or always.

The excess over the best single is the excess over the α* that comes closest, min over α* of
Σ_p E[X_p(α*)]. Its interval: the lower bound is the smallest of the α*'s lower bounds (each the
skewness-corrected t interval over problems, backend/analysis/intervals.py), which covers the
minimum whenever the α* that attains it is covered; the upper bound the smallest of their upper
bounds with the level split over the α* (Bonferroni), which covers it whenever all of them are. So
"shows" (the lower bound above 0) is an intersection–union test: every α* is beaten. Calibrated in
bench/findings_calibration.py (docs/findings.md) in every no-churn family at 12, 40 and 100
problems.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from backend.analysis.ensembles import sampled_problems
from backend.analysis.findings_rules import verdict
from backend.analysis.frame import Outcomes
from backend.analysis.intervals import mean_ci, problem_mean
from backend.analysis.resampling import half_correct
from backend.errors import UserError
from backend.vocab import SOLVED_AT

NAME = "union − best single, cross-fitted (problems)"


@dataclass
class ChurnExcess:
    status: str  # shows | does_not_show | underpowered | not_tested (findings_rules.verdict)
    estimate: float | None  # problems: the union's excess over the single that comes closest
    lo: float | None
    hi: float | None
    level: float
    against: str | None  # that single's label
    needed: float  # the excess the criterion needs: min_effect of the problems
    problems: int  # problems tested
    criterion: str
    reason: str = ""  # why it was not tested
    excluded: list[dict] = field(default_factory=list)  # {problem_id, reason}

    def to_dict(self) -> dict:
        return asdict(self)


def churn_excess(
    o: Outcomes,
    solved_at: float = SOLVED_AT,
    level: float = 0.95,
    splits: int = 8,
    min_effect: float = 0.02,
    seed: int = 0,
) -> ChurnExcess:
    """The union's excess over the best single on the merged checkpoints (those with an α), on the
    problems each of them has at least 2 judged samples of (the others `excluded`, with reasons)."""
    criterion = (
        f"problems the union of the α axis solves (≥ {solved_at:.0%} of samples; each problem's own best α chosen "
        "on one half of its samples, checked on the other) minus those the single α that comes closest solves, "
        f"averaged over {splits} random splits; {level:.0%} CI lower bound > 0"
    )
    axis = o.select([c for c, a in zip(o.checkpoints, o.alphas, strict=True) if a is not None])
    if len(axis.checkpoints) < 2:
        return ChurnExcess("not_tested", None, None, None, level, None, 0.0, 0, criterion, "fewer than 2 α swept")
    try:
        kept, excluded = sampled_problems(axis, axis.checkpoints, 2)
    except UserError:
        why = "no problem has 2 judged samples of every α, which the split into halves needs; sample more"
        return ChurnExcess("not_tested", None, None, None, level, None, 0.0, 0, criterion, why)
    per_problem = _excess_per_problem(kept.n, kept.correct, solved_at, splits, np.random.default_rng(seed))
    P, A = per_problem.shape
    mean, psi = problem_mean(per_problem)
    lows = mean_ci(mean, psi, level)[0] * P
    highs = mean_ci(mean, psi, 1 - (1 - level) / A)[1] * P  # every α* at once: Bonferroni over the A
    best = int(np.argmin(mean))
    lo, hi, needed = float(lows.min()), float(highs.min()), min_effect * P
    status = verdict(lo > 0, lo, hi, (needed, np.inf))
    return ChurnExcess(
        status, float(mean[best] * P), lo, hi, level, kept.labels[best], needed, P, criterion, excluded=excluded
    )


def _excess_per_problem(n: np.ndarray, c: np.ndarray, solved_at: float, splits: int, rng) -> np.ndarray:
    """X[p, α*] (module docstring), averaged over splits: n, c are problems × α."""
    h = (n // 2).min(axis=1, keepdims=True)  # the measuring half's size, equal across a problem's cells
    c_b = half_correct(n, c, splits, rng, size=h)  # split × problem × α
    rate_a = (c - c_b) / (n - h)
    jitter = rng.random(rate_a.shape) * 1e-9  # ties broken at random, independently of the measuring half
    own = np.argmax(rate_a + jitter, axis=-1)
    solved_b = c_b >= np.ceil(solved_at * h - 1e-9)
    own_solved = np.take_along_axis(solved_b, own[..., None], -1)
    return (own_solved.astype(np.int8) - solved_b).mean(axis=0)
