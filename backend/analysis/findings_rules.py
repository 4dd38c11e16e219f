"""The findings' shared rules: how they are tested (FindingsSpec), what they return (Part,
Finding), and the three kinds of test with the one status rule (`verdict`, `combine`) that
backend/analysis/findings.py and findings_axis.py apply. docs/findings.md writes the rule as one table.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from backend.vocab import SOLVED_AT


class FindingsSpec(BaseModel):
    """How the four findings are tested. Every threshold is fixed before the data is seen."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    margin: float = Field(0.10, gt=0, le=1, title="Equivalence margin")
    """Solve rates (pass@1) within ±margin count as equal (and F2's extrapolated point as not worse when at most
    margin below its endpoint): 10 points is a difference a user would act on; smaller differences need more
    problems than most sweeps have to be told apart from zero."""
    equivalence_level: float = Field(0.90, gt=0, lt=1, title="Equivalence CI level")
    """Flatness is shown when this CI of the difference lies inside ±margin (the two one-sided 5 % tests at 90 %), and
    non-inferiority when its lower bound is above −margin (one one-sided 5 % test)."""
    ci_level: float = Field(0.95, gt=0, lt=1, title="CI level")
    """Level of every other CI: a difference shows when this CI's lower bound is above 0."""
    min_effect: float = Field(0.02, gt=0, le=1, title="Smallest effect of interest")
    """A share change or pass@k gain below 2 points is not worth reporting: a criterion "above 0" needs at least this
    effect, so a CI that stops below it rules the effect out (does not show) and one that reaches it does not
    (underpowered)."""
    splits: int = Field(8, ge=1, title="Random half-splits")
    """Churn chooses each problem's own best α on one half of each cell's samples and measures on the other;
    averaging over several random splits removes most of the noise one split adds, without changing what is
    estimated."""
    ensemble_k: int = Field(4, ge=1, title="Ensemble k (F4)")
    """The k of F4's pass@k, fixed before the counts are seen: 4, the pass@k a sweep of 16 samples per cell reaches
    with its gain cross-fitted (chosen on 8, scored on 8: k below half of them). A problem whose cells cannot
    support it (fewer than 2(k + 1) judged samples of some checkpoint) is left out and listed, never k lowered."""
    extrapolation_alphas: tuple[float, float] = Field((-0.5, 1.5), title="Extrapolated α tested")
    """The α below 0 and above 1 where extrapolation is tested (the nearest extrapolated α on each side if absent):
    the paper's main extrapolated points."""
    solved_at: float = Field(SOLVED_AT, gt=0, le=1, title="Solved = pass rate at least")
    """A checkpoint solves a problem when at least this share of its samples is correct (frame.SOLVED_AT)."""
    seed: int = Field(0, title="Seed")
    """Seeds every resampling, so the same data gives the same verdicts."""


@dataclass
class Part:
    name: str
    status: str
    statistic: float | None
    ci_low: float | None
    ci_high: float | None
    criterion: str
    reason: str = ""  # why a part is not_tested


@dataclass
class Finding:
    finding: str
    status: str
    statistic: float | None
    ci_low: float | None
    ci_high: float | None
    criterion: str
    parts: list[Part] = field(default_factory=list)
    reason: str = ""  # why a finding is not_tested
    excluded_problems: list[dict] = field(default_factory=list)  # {problem_id, reason}: left out of its statistics
    power: dict | None = None  # F4: its power at this size for the effect it needs (findings_axis.ensemble_power)

    def to_dict(self) -> dict:
        """JSON-ready: an undefined number (NaN, e.g. a share of zero failures) is None."""
        return _no_nan(asdict(self))


def skipped(finding: str, criterion: str, reason: str, excluded_problems: list[dict] | None = None) -> Finding:
    """A finding these data cannot test, with the reason in words (no statistic, no parts)."""
    return Finding(finding, "not_tested", None, None, None, criterion, [], reason, excluded_problems or [])


def _no_nan(value):
    if isinstance(value, dict):
        return {k: _no_nan(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_no_nan(v) for v in value]
    return None if isinstance(value, float) and np.isnan(value) else value


# -- the three kinds of test -------------------------------------------------------------------
# Each takes an estimate with a CI at any level (intervals.Estimate: the skewness-corrected t
# interval over problems, calibrated in bench/findings_calibration.py).


def verdict(met: bool, lo: float, hi: float, needed: tuple[float, float]) -> str:
    """The one rule (docs/findings.md, "Statuses"): shows when the criterion is met; otherwise
    underpowered while the CI [lo, hi] still reaches the region of effects the criterion needs,
    `needed` = (low, high) — the data cannot rule that effect out — and does_not_show once it
    does not. Where the criterion is "CI above no effect", a CI that misses it contains no effect,
    so underpowered is then exactly "the CI holds both no effect and the needed effect"."""
    if met:
        return "shows"
    return "underpowered" if lo < needed[1] and hi > needed[0] else "does_not_show"


def undefined(name: str, criterion: str, reason: str) -> Part:
    """A part whose statistic is undefined on these data is not tested, with the reason in words: an
    undefined number is no evidence either way, so it gets no verdict."""
    return Part(name, "not_tested", None, None, None, criterion, reason)


class Interval(Protocol):
    """An estimate and its CI at any level (intervals.Estimate)."""

    value: float

    def ci(self, level: float) -> tuple[float, float]: ...


def above_zero(name: str, est: Interval, spec: FindingsSpec, criterion: str) -> Part:
    """Shows when the CI's lower bound is above 0; the effect it needs is more than min_effect."""
    criterion = f"{criterion}: {spec.ci_level:.0%} CI lower bound > 0"
    if not np.isfinite(est.value):
        return undefined(name, criterion, "its statistic is undefined on these data")
    lo, hi = est.ci(spec.ci_level)
    return Part(name, verdict(lo > 0, lo, hi, (spec.min_effect, np.inf)), est.value, lo, hi, criterion)


def equivalent(name: str, est: Interval, spec: FindingsSpec) -> Part:
    """Equivalence: shows when the CI lies inside ±margin; the effect it needs is any difference inside it."""
    lo, hi = est.ci(spec.equivalence_level)
    status = verdict(-spec.margin < lo and hi < spec.margin, lo, hi, (-spec.margin, spec.margin))
    return Part(name, status, est.value, lo, hi, f"{spec.equivalence_level:.0%} CI inside ±{spec.margin:g}")


def non_inferior(name: str, est: Interval, spec: FindingsSpec) -> Part:
    """Non-inferiority: shows when the CI's lower bound is above −margin (better is never a failure)."""
    lo, hi = est.ci(spec.equivalence_level)
    status = verdict(lo > -spec.margin, lo, hi, (-spec.margin, np.inf))
    return Part(name, status, est.value, lo, hi, f"{spec.equivalence_level:.0%} CI lower bound > −{spec.margin:g}")


def combine(name: str, parts: list[Part], criterion: str) -> Finding:
    """Every part shows: shows. Else the first of does_not_show, underpowered, not_tested that some
    part has: a finding is shown only when all of it is. The headline numbers are those of the
    part that decided."""
    statuses = [p.status for p in parts]
    status = next((s for s in ("does_not_show", "underpowered", "not_tested") if s in statuses), "shows")
    lead = parts[statuses.index(status)] if status != "shows" else parts[0]
    return Finding(name, status, lead.statistic, lead.ci_low, lead.ci_high, criterion, parts, lead.reason)
