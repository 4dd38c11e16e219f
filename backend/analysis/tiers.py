"""Significance tiers of checkpoints: which ones a paired test over problems cannot tell from the best.
Pure numpy/scipy over per-problem values (pass@1: a problem's share of correct samples).

Tier 1 holds every checkpoint that no other checkpoint is shown to beat; tier 2 the same among the
rest, and so on down, as LiveCodeBench's issue 147 asks of its leaderboard. "Shown to beat" is a
one-sided paired t-test over the problems both checkpoints have samples of, and the decisions are
Holm-corrected across the checkpoints of the round.

Why every other checkpoint is a comparator, not only the observed best: the observed best is the
maximum of noisy means, so its lead over the others is inflated by its own selection; tested
against it alone, no-difference sweeps of 9 checkpoints were split into tiers in 20 % and 22 % of
worlds at 12 and 40 problems, against a nominal 5 % (bench/tier_calibration.py measures both).
Here the hypothesis of checkpoint c is "c is as good as the best", which holds only if no
checkpoint is better than c; its p-value is the smallest one-sided p of "j beats c" over the m − 1
others, times m − 1 (Bonferroni: valid whichever j is truly best), and Holm's step-down over the m
checkpoints keeps the chance of splitting any tied checkpoint off tier 1 at most `level` (measured:
4.2 % and 3.1 %; docs/findings.md gives its power). A checkpoint below tier 1 is beaten beyond that
doubt.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import t as student_t

LEVEL = 0.05  # family-wise, across the checkpoints of a round


@dataclass(frozen=True)
class Tiers:
    """tier[c] (1 = not shown worse than any checkpoint); p[c], the Holm-adjusted p of "c is as good as
    the best": for a tier-1 checkpoint in the first round (above `level`: how near it came to being
    split off), below tier 1 in the round that split it from the tier above (at most `level`);
    against[c], the checkpoint with the smallest p of beating c in that same round (-1: none)."""

    tier: np.ndarray
    p: np.ndarray
    against: np.ndarray


def beats_p(values: np.ndarray) -> np.ndarray:
    """P[j, c]: one-sided paired t-test p-value that column j is higher than column c, over the rows
    (problems) where both are defined. Fewer than two such problems: 1 (nothing shown). All
    differences equal: 0 if they are positive, else 1 (a t with no spread). The diagonal is 1."""
    d = values[:, :, None] - values[:, None, :]  # problems × j × c
    has = ~np.isnan(d)
    count = has.sum(axis=0)
    d = np.where(has, d, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = d.sum(axis=0) / count
        var = ((d - mean) ** 2 * has).sum(axis=0) / (count - 1)
        t = mean / np.sqrt(var / count)
        p = student_t.sf(t, np.maximum(count - 1, 1))
    flat = ~(var > 1e-18)  # every difference the same (a t with no spread)
    p = np.where(flat, np.where(mean > 0, 0.0, 1.0), p)
    p = np.where(count < 2, 1.0, p)
    np.fill_diagonal(p, 1.0)
    return p


def holm_adjusted(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values: the k-th smallest times (m − k + 1), kept monotone, at most 1."""
    order = np.argsort(p, kind="stable")
    m = len(p)
    scaled = np.minimum(1.0, np.maximum.accumulate(p[order] * (m - np.arange(m))))
    out = np.empty(m)
    out[order] = scaled
    return out


def tiers(values: np.ndarray, level: float = LEVEL) -> Tiers:
    """values[p, c]: checkpoint c's value on problem p (NaN where it has no sample). See the module."""
    checkpoints = values.shape[1]
    pairwise = beats_p(values)
    means = np.array([np.nanmean(col) if (~np.isnan(col)).any() else -np.inf for col in values.T])
    tier = np.zeros(checkpoints, dtype=int)
    adjusted = np.ones(checkpoints)
    against = np.full(checkpoints, -1)
    remaining = np.arange(checkpoints)
    current = 1
    while len(remaining):
        m = len(remaining)
        sub = pairwise[np.ix_(remaining, remaining)]  # [j, c] within this round
        raw = np.minimum(1.0, (m - 1) * sub.min(axis=0)) if m > 1 else np.ones(1)
        adj = holm_adjusted(raw)
        kept = adj > level
        if not kept.any():  # cannot happen (the top's own p is at least 1/2), kept for safety: the top stays
            kept[np.argmax(means[remaining])] = True
        told = ~kept | (current == 1)  # a round says something of those it splits off, and round 1 of all
        adjusted[remaining[told]] = adj[told]
        if m > 1:
            against[remaining[told]] = remaining[sub.argmin(axis=0)][told]
        tier[remaining[kept]] = current
        remaining = remaining[~kept]
        current += 1
    return Tiers(tier=tier, p=adjusted, against=against)


def separated(t: Tiers) -> bool:
    """Whether any checkpoint is below tier 1 (a false separation, where they are all alike)."""
    return bool((t.tier > 1).any())
