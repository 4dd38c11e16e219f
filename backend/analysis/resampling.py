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

CHUNK_CELLS = 2_000_000  # cells per resampling chunk: bounds memory whatever the sweep's size


def half_correct(n: np.ndarray, c: np.ndarray, splits: int, rng: np.random.Generator) -> np.ndarray:
    """cA[s, ...]: correct samples among ⌊n/2⌋ drawn without replacement from each cell, for
    `splits` independent random halves. numpy's hypergeometric sampler costs ~200 ns a draw; an
    inverse CDF over the few distinct (n, c) pairs costs a few comparisons."""
    n = np.broadcast_to(n, c.shape).ravel().astype(np.int64)
    key = n * (int(n.max(initial=0)) + 1) + c.ravel()  # one integer per distinct (n, c) pair
    pairs, inverse = np.unique(key, return_inverse=True)
    total, good = np.divmod(pairs, int(n.max(initial=0)) + 1)
    half = total // 2
    x = np.arange(int(half.max(initial=0)) + 1)
    cdf = hypergeom.cdf(x[None, :], total[:, None], good[:, None], half[:, None])
    cdf = np.where(x[None, :] >= np.minimum(good, half)[:, None], 1.0, np.nan_to_num(cdf, nan=1.0))
    u = rng.random((splits, n.size))
    drawn = np.zeros((splits, n.size), dtype=np.int64)
    for value in x[:-1]:  # cA = how many CDF steps u passes (the last step's CDF is 1)
        drawn += u > cdf[inverse, value]
    return drawn.reshape((splits, *c.shape))


def fit_additive_logit(n: np.ndarray, c: np.ndarray, iterations: int = 60, ridge: float = 1e-2) -> np.ndarray:
    """p[p, α] = expit(a_p + b_α), the binomial maximum-likelihood fit by alternating Newton steps.
    The no-churn null: every α moves every problem's log-odds by the same amount, so which
    problems an α solves differs only by sampling noise. The small ridge keeps a problem that no
    sample (or every sample) solved at a finite, tiny (or near-one) rate."""
    n, c = n.astype(np.float64), c.astype(np.float64)
    a = np.log((c.sum(axis=1) + 0.5) / (n.sum(axis=1) - c.sum(axis=1) + 0.5))
    b = np.zeros(n.shape[1])
    for _ in range(iterations):
        for axis in (1, 0):
            mu = expit(a[:, None] + b[None, :])
            grad = (c - n * mu).sum(axis=axis)
            hess = (n * mu * (1 - mu)).sum(axis=axis) + ridge
            if axis == 1:
                a += np.clip((grad - ridge * a) / hess, -2.0, 2.0)
            else:
                b += np.clip((grad - ridge * b) / hess, -2.0, 2.0)
        shift = b.mean()  # only a_p + b_α is identified
        a, b = a + shift, b - shift
    return expit(a[:, None] + b[None, :])


def null_draws(n: np.ndarray, p: np.ndarray, replicates: int, rng: np.random.Generator):
    """Chunks of simulated correct counts c*[b, problem, α] ~ Binomial(n, p), for the parametric
    bootstrap, each chunk small enough to resample (CHUNK_CELLS)."""
    per_chunk = max(1, CHUNK_CELLS // max(n.size, 1))
    for start in range(0, replicates, per_chunk):
        size = min(per_chunk, replicates - start)
        yield rng.binomial(np.broadcast_to(n, (size, *n.shape)), np.broadcast_to(p, (size, *p.shape)))
