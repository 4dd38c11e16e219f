"""Intervals over problems, in closed form: every CI of a mean over problems (the findings' parts,
the trend's slopes, the frontier table, the pass@k curves and bands, T2, the churn excess) is
Student's t corrected for skewness by Hall's transformation.

Why not the bootstrap's percentiles, or the plain t interval: problems differ, and their
per-problem values (a share's change from α = 0 to 1, a pass rate, a slope) are often skewed — a
few problems move a lot one way, most a little the other. With a dozen problems the plain t
interval then misses on one side far more often than on the other (the mean and its standard
error move together), and the percentile bootstrap is too narrow besides. Hall (1992, "On the
removal of skewness by transformation", JRSS B 54) maps the studentized mean T through
g(T) = T + aT²/3 + a²T³/27 + a/6, a the estimator's skewness, which removes the skewness term of
T's Edgeworth expansion; g is monotone, so the interval is g's inverse at t's quantiles, in
closed form. Its coverage error is O(1/P) where t's is O(1/√P); with no skewness it is the t
interval. Calibrated in bench/findings_calibration.py (docs/findings.md), at 12, 40 and 100
problems, in worlds whose per-problem effects are skewed.

Every function works on per-problem *influence values* ψ_p: how much problem p moves the
estimate, so that estimate − truth ≈ mean(ψ). For a mean over problems ψ_p is the problem's value
minus the mean; for a mean over the problems that have a sample (a share at an α some problem
lacks) it is scaled by P / (problems that have one); for a ratio or a difference, the usual
delta-method combination. Problems are the unit: the samples within a problem are not resampled
apart from it, so a CI over problems holds whatever the per-cell sample sizes.
"""

from __future__ import annotations

import numpy as np
from scipy.special import stdtrit  # Student's t quantile: scipy.stats.t.ppf's answer, 20× faster


def problem_mean(values: np.ndarray, has: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The mean over problems (axis 0) of `values` where `has` holds, and its influence values ψ
    (same shape as values; 0 where has is False). A column no problem has is NaN."""
    values = np.asarray(values, dtype=np.float64)
    has = np.ones(values.shape, dtype=bool) if has is None else np.broadcast_to(has, values.shape)
    count = has.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(has, values, 0.0).sum(axis=0) / count
        psi = np.where(has, values - mean, 0.0) * (values.shape[0] / np.maximum(count, 1))
    return np.where(count > 0, mean, np.nan), psi


def ratio_influence(num: tuple, den: tuple) -> tuple[np.ndarray, np.ndarray]:
    """num / den of two estimates with influence values, each (estimate, ψ): the ratio and its ψ."""
    (a, psi_a), (b, psi_b) = num, den
    with np.errstate(invalid="ignore", divide="ignore"):
        return a / b, (psi_a * b - psi_b * a) / (b * b)


def skew_t(estimate, se, skew, df, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """The `level` interval of an estimate with standard error `se` and skewness `skew` (its
    third standardized cumulant, e.g. γ/√P for a mean of P values of skewness γ): Student's t
    with `df` degrees of freedom, each end moved out to where Hall's transformation puts it when
    that is farther. Where se = 0 the interval is the estimate.

    Why the union of the two and not Hall's alone: a sample's skewness is noisy, and in a
    symmetric population with many equal values (problems solved never or always) it is high
    exactly when the mean is, so Hall's interval alone moved towards the data's side and excluded
    a true 0 in 3.6 % of simulated runs against 2.5 % (t: 1.2 %). Each end of the union is the
    farther of the two, so it misses on a side only when both intervals miss there: where the
    population is symmetric it errs no more than t, where it is skewed no more than Hall."""
    estimate, se = np.asarray(estimate, dtype=np.float64), np.asarray(se, dtype=np.float64)
    a = np.where(np.isfinite(skew) & (se > 0), skew, 0.0)
    q = stdtrit(np.maximum(df, 1), 0.5 + level / 2)
    low = np.maximum(q, _inverse(q, a))  # how many standard errors below the estimate, at least t's
    high = np.maximum(q, -_inverse(-q, a))
    return estimate - se * low, estimate + se * high


def _inverse(z, a):
    """T with g(T) = z, g(T) = ((1 + aT/3)³ − 1)/a + a/6 (= T + aT²/3 + a²T³/27 + a/6)."""
    small = np.abs(a) < 1e-9
    safe = np.where(small, 1.0, a)
    exact = 3.0 / safe * (np.cbrt(1.0 + safe * (z - safe / 6.0)) - 1.0)
    return np.where(small, z, exact)


def moments(psi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(variance of the mean, third cumulant of the mean, P) from influence values ψ (P, ...):
    s²/P and m3/P², s² with P − 1 in its denominator."""
    P = psi.shape[0]
    centred = psi - psi.mean(axis=0)
    var = (centred**2).sum(axis=0) / max(P - 1, 1)
    return var / P, (centred**3).mean(axis=0) / P**2, P


def mean_ci(estimate, psi: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """The interval over problems of an estimate with influence values ψ (P, ...)."""
    var, k3, P = moments(np.asarray(psi, dtype=np.float64))
    se = np.sqrt(var)
    with np.errstate(invalid="ignore", divide="ignore"):
        skew = k3 / se**3
    return skew_t(estimate, se, skew, P - 1, level)


def values_ci(values: np.ndarray, has: np.ndarray | None = None, level: float = 0.95):
    """(mean, lo, hi) over problems (axis 0) of per-problem values where `has` holds."""
    mean, psi = problem_mean(values, has)
    lo, hi = mean_ci(mean, psi, level)
    return mean, lo, hi


def welch_ci(a: np.ndarray, b: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """mean(a) − mean(b) for two independent sets of problems: Welch's t interval (each set its own
    variance, Welch–Satterthwaite's degrees of freedom) after Hall's transformation, the skewness
    that of the difference."""
    (va, ka, na), (vb, kb, nb) = moments(np.asarray(a, float)), moments(np.asarray(b, float))
    se = float(np.sqrt(va + vb))
    df = (va + vb) ** 2 / (va**2 / max(na - 1, 1) + vb**2 / max(nb - 1, 1)) if se > 0 else 1.0
    skew = (ka - kb) / se**3 if se > 0 else 0.0
    lo, hi = skew_t(float(np.mean(a) - np.mean(b)), se, skew, df, level)
    return float(lo), float(hi)


class Estimate:
    """An estimate over problems and its influence values ψ (P,): its CI at any level (mean_ci), and
    differences that stay paired (the same problems on both sides)."""

    def __init__(self, value: float, psi: np.ndarray):
        self.value, self.psi = float(value), np.asarray(psi, dtype=np.float64)

    def ci(self, level: float) -> tuple[float, float]:
        if not np.isfinite(self.value) or not np.isfinite(self.psi).all():
            return np.nan, np.nan
        lo, hi = mean_ci(self.value, self.psi, level)
        return float(lo), float(hi)

    def __sub__(self, other: Estimate) -> Estimate:
        return Estimate(self.value - other.value, self.psi - other.psi)
