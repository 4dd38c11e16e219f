"""pass@k and matched-budget ensembles (docs/method.md, Metrics). Pure numpy.

With n samples of which c are correct, the chance that k samples drawn without replacement hold
no correct one is C(n−c, k)/C(n, k) = Π_{j<k} (n−c−j)/(n−j). A cumulative product over j gives
that ratio for every k = 1…n at once, with every factor in [0, 1]: no factorials, no overflow.
"""

from __future__ import annotations

import math

import numpy as np

from backend.errors import UserError


def miss_ratio_table(n: np.ndarray, c: np.ndarray, kmax: int) -> np.ndarray:
    """R[..., k] = C(n − c, k) / C(n, k) for k = 0…kmax (R[..., 0] = 1), one row per cell of n and c
    (any shape, e.g. problems, or splits × checkpoints × problems); NaN where k > n."""
    n = np.asarray(n, dtype=np.float64)[..., None]
    c = np.asarray(c, dtype=np.float64)[..., None]
    j = np.arange(kmax, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        factors = np.clip((n - c - j) / (n - j), 0.0, 1.0)
    table = np.ones((*n.shape[:-1], kmax + 1))
    table[..., 1:] = np.where(j >= n, np.nan, np.cumprod(factors, axis=-1))  # fewer than k samples: undefined
    return table


def pass_at_k(n: np.ndarray, c: np.ndarray, k: int) -> np.ndarray:
    """Unbiased pass@k per problem: 1 − C(n−c, k)/C(n, k)."""
    if k < 1:
        raise UserError(f"k must be at least 1, got {k}")
    return 1.0 - miss_ratio_table(n, c, k)[:, k]


def pass_at_k_curve(n: np.ndarray, c: np.ndarray, kmax: int | None = None) -> np.ndarray:
    """P[p, k−1] = pass@k of problem p for every k = 1…kmax (default: min n)."""
    kmax = kmax or int(np.min(n))
    return 1.0 - miss_ratio_table(n, c, kmax)[:, 1:]


def expected_miss(tables: list[np.ndarray], k: int) -> np.ndarray:
    """Per problem, the chance that a matched-budget pool misses: M members spend k samples, ⌊k/M⌋
    each, and the r = k mod M remaining samples go to r members chosen uniformly at random (not
    to the first ones, which would make pass@1 of a pool the pass@1 of one arbitrary member).

    tables[m][..., p, j] = C(n−c, j)/C(n, j) for member m (miss_ratio_table; any leading axes, e.g.
    half-splits, are carried through). The expectation over the
    C(M, r) choices is exact: with a_m = T_m[b] and d_m = T_m[b+1], it is the t^r coefficient of
    Π_m (a_m + d_m·t), divided by C(M, r), built member by member (O(M·r) per problem)."""
    members = len(tables)
    if members < 1:
        raise UserError("an ensemble needs at least one member")
    base, r = divmod(k, members)
    poly = np.zeros((*tables[0].shape[:-1], r + 1))
    poly[..., 0] = 1.0
    for t in tables:
        if base + (r > 0) >= t.shape[-1] or np.isnan(t[..., base + (r > 0)]).any():
            raise UserError(
                f"pass@{k} over {members} members needs {base + (r > 0)} samples per member; some have fewer"
            )
        a, d = t[..., base], t[..., base + 1] if r else None
        shifted = poly * a[..., None]
        if r:
            shifted[..., 1:] += poly[..., :-1] * d[..., None]
        poly = shifted
    return poly[..., r] / math.comb(members, r)


def ensemble_pass_at_k(n: np.ndarray, c: np.ndarray, k: int) -> np.ndarray:
    """Matched budget: a pool of M checkpoints (columns of n, c: problems × M) spends k samples;
    per problem 1 − E[Π_m C(n_m − c_m, k_m)/C(n_m, k_m)] over the remainder's placement."""
    n, c = np.atleast_2d(n), np.atleast_2d(c)
    need = -(-k // n.shape[1])
    tables = [miss_ratio_table(n[:, m], c[:, m], need) for m in range(n.shape[1])]
    return 1.0 - expected_miss(tables, k)
