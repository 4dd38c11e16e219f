"""pass@k and matched-budget ensembles (PAPER.md, Metrics). Pure numpy.

With n samples of which c are correct, the chance that k samples drawn without replacement hold
no correct one is C(n−c, k)/C(n, k) = Π_{j<k} (n−c−j)/(n−j). A cumulative product over j gives
that ratio for every k = 1…n at once, with every factor in [0, 1]: no factorials, no overflow.
"""

from __future__ import annotations

import numpy as np

from backend.errors import UserError


def miss_ratio_table(n: np.ndarray, c: np.ndarray, kmax: int) -> np.ndarray:
    """R[p, k] = C(n_p − c_p, k) / C(n_p, k) for k = 0…kmax (R[:, 0] = 1); NaN where k > n_p."""
    n = np.asarray(n, dtype=np.float64)[:, None]
    c = np.asarray(c, dtype=np.float64)[:, None]
    j = np.arange(kmax, dtype=np.float64)[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        factors = np.clip((n - c - j) / (n - j), 0.0, 1.0)
    table = np.ones((n.shape[0], kmax + 1))
    table[:, 1:] = np.cumprod(factors, axis=1)
    table[:, 1:][j.repeat(n.shape[0], 0) >= n] = np.nan  # fewer than k samples: undefined
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


def split_budget(k: int, members: int) -> list[int]:
    """k samples over M members, k/M each, the remainder spread one by one from the first."""
    if members < 1:
        raise UserError("an ensemble needs at least one member")
    base, extra = divmod(k, members)
    return [base + (1 if m < extra else 0) for m in range(members)]


def ensemble_pass_at_k(n: np.ndarray, c: np.ndarray, k: int) -> np.ndarray:
    """Matched budget: a pool of M checkpoints (columns of n, c: problems × M) spends k samples,
    k/M from each; per problem 1 − Π_m C(n_m − c_m, k_m)/C(n_m, k_m)."""
    n, c = np.atleast_2d(n), np.atleast_2d(c)
    shares = split_budget(k, n.shape[1])
    if max(shares) > int(n.min()):
        raise UserError(
            f"pass@{k} over {n.shape[1]} members needs {max(shares)} samples per member; some have {int(n.min())}"
        )
    miss = np.ones(n.shape[0])
    for m, k_m in enumerate(shares):
        if k_m:
            miss *= miss_ratio_table(n[:, m], c[:, m], k_m)[:, k_m]
    return 1.0 - miss


def ensemble_curve(n: np.ndarray, c: np.ndarray, ks: list[int]) -> np.ndarray:
    """E[p, i] = ensemble pass@ks[i] of problem p (problems × len(ks))."""
    return np.stack([ensemble_pass_at_k(n, c, k) for k in ks], axis=1)
