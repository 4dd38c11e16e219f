"""A difference-in-differences between two problem sets, with a Welch t interval over problems: how
much more a class of outcomes changes from θ_low (α = 0) to θ_high (α = 1) on one set than on
another.

The miniature lab's fourth design (docs/lab-preregistration.md, build G) trains half of its
separating problems without their reference program ("withheld") and half with it ("kept"). Its
pre-registered test: correctness failures rise more from θ_low to θ_high on the withheld set than
on the kept set. Per problem, the change is its share of samples in the class at α = 1 minus at
α = 0; each set's change is the mean over its problems; the statistic is the withheld mean minus
the kept mean. Its CI is Welch's: the sets are drawn apart, so each has its own variance, and the
interval is the statistic ± t(ν)·√(s_w²/P_w + s_k²/P_k), ν by Welch–Satterthwaite, each end
widened to where Hall's transformation for the difference's skewness puts it when that is farther
(intervals.welch_ci). Why not the bootstrap's percentiles, the pre-registered interval: resampling
each set of a few problems gives too narrow a spread and normal tails; on
bench/findings_calibration.py's no-effect worlds with 6 + 6 problems it showed in 51 of 1,000
against a nominal 2.5 %. Why the skewness correction: when one set's problems move unevenly (a
few far one way, most a little the other) Welch's t alone showed in 4.7 % of such worlds of the
lab's 14 + 15 problems (docs/findings.md has the rows).

Statuses, in the findings' terms: *shows* when the CI's lower bound is above 0; *underpowered*
only when the CI holds both no effect (0) and the effect the test needs (`needed`); *does not show*
when the CI holds 0 and rules out the needed effect, or lies below 0; *not tested* when a set has
fewer than 2 problems with samples at both endpoints (no variance, so no interval).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from backend.analysis.frame import Outcomes
from backend.outcomes import OutcomeClass

DID_STATUSES = ("shows", "does_not_show", "underpowered", "not_tested")


@dataclass(frozen=True)
class DidSpec:
    needed: float = 0.10
    """The effect the test needs: 10 points more correctness failures on the withheld set (the
    findings' equivalence margin; build F's matrix-region-sums rose by 37.5 points)."""
    ci_level: float = 0.95


@dataclass
class Did:
    status: str
    statistic: float | None  # withheld change minus kept change
    ci_low: float | None
    ci_high: float | None
    withheld_change: float | None
    kept_change: float | None
    problems: tuple[int, int]  # (withheld, kept) problems tested
    criterion: str

    def to_dict(self) -> dict:
        return asdict(self)


def endpoint_change(o: Outcomes, problems: list[str], outcome: str = OutcomeClass.CORRECTNESS_FAILURE) -> np.ndarray:
    """Per problem of `problems` (in that order, those with samples at both endpoints): its share of
    samples in `outcome` at α = 1 minus at α = 0."""
    low, high = _at(o, 0.0), _at(o, 1.0)
    if low is None or high is None:
        return np.zeros(0)
    rows = [o.problems.index(p) for p in problems if p in o.problems]
    rows = [r for r in rows if o.n[r, low] > 0 and o.n[r, high] > 0]
    count, n = o.counts[outcome][rows], o.n[rows]
    return count[:, high] / n[:, high] - count[:, low] / n[:, low]


def _at(o: Outcomes, alpha: float) -> int | None:
    return next((i for i, a in enumerate(o.alphas) if a is not None and abs(a - alpha) < 1e-9), None)


def difference_in_differences(withheld: np.ndarray, kept: np.ndarray, spec: DidSpec | None = None) -> Did:
    """The statistic, its Welch t CI and status from per-problem changes of each set."""
    from backend.analysis.intervals import welch_ci

    spec = spec or DidSpec()
    criterion = (
        f"mean change on the withheld set − on the kept set, {spec.ci_level:.0%} Welch t CI over problems "
        "(skewness-corrected) "
        f"lower bound > 0; needed effect {spec.needed:+g}"
    )
    withheld, kept = np.asarray(withheld, dtype=float), np.asarray(kept, dtype=float)
    sizes = (len(withheld), len(kept))
    if min(sizes) < 2:
        return Did("not_tested", None, None, None, None, None, sizes, criterion)
    point = float(withheld.mean() - kept.mean())
    if withheld.var() == 0 and kept.var() == 0:  # every problem alike in each set: no spread to widen by
        lo = hi = point
    else:
        lo, hi = welch_ci(withheld, kept, spec.ci_level)
    return Did(
        status_of(lo, hi, spec.needed),
        point,
        lo,
        hi,
        float(withheld.mean()),
        float(kept.mean()),
        sizes,
        criterion,
    )


def status_of(ci_low: float, ci_high: float, needed: float) -> str:
    """shows: the CI lies above 0; underpowered: it holds both 0 and the needed effect; else does not show."""
    if ci_low > 0:
        return "shows"
    return "underpowered" if ci_high >= needed else "does_not_show"


def did_power(withheld, kept, runs: int = 200, spec: DidSpec | None = None, seed: int = 0) -> dict[str, float]:
    """{status: share of `runs` simulated sweeps}: the test on sweeps drawn by the power model
    (backend/analysis/power.py, `PowerSpec` values `withheld` and `kept`, one per set)."""
    from backend.analysis.power import simulate_sweep

    rng = np.random.default_rng(seed)
    tally = dict.fromkeys(DID_STATUSES, 0)
    for _ in range(runs):
        w, k = simulate_sweep(withheld, rng), simulate_sweep(kept, rng)
        tally[
            difference_in_differences(endpoint_change(w, w.problems), endpoint_change(k, k.problems), spec).status
        ] += 1
    return {status: count / runs for status, count in tally.items()}
