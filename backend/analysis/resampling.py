"""Resampling for the findings: random half-splits of each cell's samples, and the no-churn null
model (logit p = a_problem + b_α) with its parametric bootstrap. Pure numpy/scipy over counts.

A sweep stores counts per (problem, checkpoint), not which sample was correct; the samples of a
cell are exchangeable, so the number of correct samples in a random half of them is exactly
hypergeometric given the cell's counts. That is all a split-half statistic needs.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit
from scipy.stats import hypergeom

CHUNK_CELLS = 250_000  # cells per resampling chunk (each split 8-fold): bounds memory whatever the sweep's size


def half_correct(
    n: np.ndarray, c: np.ndarray, splits: int, rng: np.random.Generator, size: np.ndarray | None = None
) -> np.ndarray:
    """cA[s, ...]: correct samples among `size` (default ⌊n/2⌋) drawn without replacement from
    each cell, for `splits` independent random draws. numpy's hypergeometric sampler costs ~200 ns
    a draw; an inverse CDF over the few distinct (n, c, size) triples costs one binary search."""
    n = np.broadcast_to(n, c.shape).ravel().astype(np.int64)
    size = n // 2 if size is None else np.broadcast_to(size, c.shape).ravel().astype(np.int64)
    base = int(n.max(initial=0)) + 1
    key = (n * base + c.ravel()) * base + size  # one integer per distinct (n, c, size) triple
    triples, inverse = np.unique(key, return_inverse=True)
    rest, half = np.divmod(triples, base)
    total, good = np.divmod(rest, base)
    x = np.arange(int(half.max(initial=0)) + 1)
    cdf = hypergeom.cdf(x[None, :], total[:, None], good[:, None], half[:, None])
    cdf = np.where(x[None, :] >= np.minimum(good, half)[:, None], 1.0, np.nan_to_num(cdf, nan=1.0))
    # Row i's CDF shifted by i is sorted when flattened, so one searchsorted finds every cell's draw
    width = len(x)
    flat = (cdf + np.arange(len(triples))[:, None]).ravel()
    u = rng.random((splits, n.size)) + inverse.ravel()[None, :]
    drawn = np.searchsorted(flat, u, side="right") - inverse.ravel()[None, :] * width
    return drawn.reshape((splits, *c.shape))


def fit_additive_logit(n: np.ndarray, c: np.ndarray, iterations: int = 60, ridge: float = 1e-2) -> np.ndarray:
    """p[p, α] = expit(a_p + b_α), the no-churn null: every α moves every problem's log-odds by the
    same amount, so which problems an α solves differs only by sampling noise.

    a and b are the binomial maximum-likelihood fit (alternating Newton steps; the small ridge
    keeps a problem no sample, or every sample, solved at a finite rate). b is then shrunk
    towards 0 by its empirical-Bayes factor τ²/(τ² + se²): the fitted b of identical checkpoints
    differ by noise alone, and a null world that took that noise for real differences would make
    one α reliably best, churn less than the truth, and so call noise churn (measured: 11 % of
    runs at a 5 % test before the shrinkage)."""
    n, c = n.astype(np.float64), c.astype(np.float64)
    a = np.log((c.sum(axis=1) + 0.5) / (n.sum(axis=1) - c.sum(axis=1) + 0.5))
    b = np.zeros(n.shape[1])
    for _ in range(iterations):
        a = _newton(a, b, n, c, ridge, axis=1)
        b = _newton(b, a, n, c, ridge, axis=0)
        shift = b.mean()  # only a_p + b_α is identified
        a, b = a + shift, b - shift
    mu = expit(a[:, None] + b[None, :])
    se2 = 1.0 / ((n * mu * (1 - mu)).sum(axis=0) + ridge)
    tau2 = max(0.0, float(b.var(ddof=1) - se2.mean())) if len(b) > 1 else 0.0
    b = b * tau2 / (tau2 + se2)
    for _ in range(iterations // 4):  # refit each problem's level to the shrunk b
        a = _newton(a, b, n, c, ridge, axis=1)
    return expit(a[:, None] + b[None, :])


def _newton(theta: np.ndarray, other: np.ndarray, n, c, ridge: float, axis: int) -> np.ndarray:
    """One clipped Newton step for the problem levels (axis=1, other = b) or the α shifts (axis=0, other = a)."""
    eta = theta[:, None] + other[None, :] if axis == 1 else other[:, None] + theta[None, :]
    mu = expit(eta)
    grad = (c - n * mu).sum(axis=axis) - ridge * theta
    hess = (n * mu * (1 - mu)).sum(axis=axis) + ridge
    return theta + np.clip(grad / hess, -2.0, 2.0)


def null_draws(n: np.ndarray, p: np.ndarray, replicates: int, rng: np.random.Generator):
    """Chunks of simulated correct counts c*[b, problem, α] ~ Binomial(n, p), for the parametric
    bootstrap, each chunk small enough to resample (CHUNK_CELLS)."""
    per_chunk = max(1, CHUNK_CELLS // max(n.size, 1))
    for start in range(0, replicates, per_chunk):
        size = min(per_chunk, replicates - start)
        yield rng.binomial(np.broadcast_to(n, (size, *n.shape)), np.broadcast_to(p, (size, *p.shape)))


def t_ci(point, replicates: np.ndarray, problems: int, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """point ± t(P − 1)·se over the problems, se the sd of its problem-bootstrap replicates (axis 0)
    scaled by √(P / (P − 1)): for a mean over P problems that is exactly s/√P, the t interval's own
    standard error. Why not the replicates' percentiles: the bootstrap's spread of a mean over a
    dozen problems is s·√((P − 1)/P)/√P, too narrow, and its percentiles use normal tails where
    t's are wider; the percentile CI of the trend's slope excluded a true 0 in 12 % of simulated
    runs at 12 problems (nominal 5 %; bench/findings_calibration.py)."""
    from scipy.stats import t as student_t

    P = max(int(problems), 2)
    se = np.nanstd(replicates, axis=0, ddof=1) * np.sqrt(P / (P - 1))
    half = student_t.ppf(0.5 + level / 2, P - 1) * se
    return point - half, point + half
