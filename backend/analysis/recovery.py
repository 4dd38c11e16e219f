"""Does interpolation recover independently trained checkpoints? Each one's distance to the
interpolation curve in the (optimization share, correctness share) plane, tested against the
distance's own null distribution (a checkpoint drawn from the nearest curve point's rates), with
a bias-corrected CI that can reach 0. Pure numpy over `Outcomes`."""

from __future__ import annotations

import math

import numpy as np

from backend.analysis.frame import Outcomes, bootstrap_weights
from backend.analysis.resampling import t_ci
from backend.outcomes import OutcomeClass

SHARE_CLASSES = (OutcomeClass.OPTIMIZATION_FAILURE, OutcomeClass.CORRECTNESS_FAILURE)
MARGIN = round(0.10 * math.sqrt(2), 3)
"""A distance in the (optimization, correctness) share plane within which a checkpoint counts as on
the curve: the findings' equivalence margin (FindingsSpec.margin, 10 points) in each of the two
shares, 0.10·√2 = 0.141. At 0.10, a 10-point shift of one share alone, an on-curve checkpoint was
called on the curve in only 93.9 % of simulated runs at 12 problems (bench/findings_calibration.py,
docs/findings.md)."""


def class_shares(o: Outcomes, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(optimization, correctness) failure shares per checkpoint, per row of problem weights:
    each problem's fraction of samples, averaged over the problems a checkpoint sampled."""
    has = o.n > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = [np.where(has, o.counts[c] / np.maximum(o.n, 1), 0.0) for c in SHARE_CLASSES]
        return tuple((weights @ f) / (weights @ has) for f in frac)


def distance_to_curve(points: np.ndarray, curve: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """points (..., 2), curve (..., M, 2) a polyline: the distance from each point to it, the
    index of the nearest segment and where on it (0…1)."""
    a, b = curve[..., :-1, :], curve[..., 1:, :]
    ab, aq = b - a, points[..., None, :] - a
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.clip(np.nan_to_num((aq * ab).sum(-1) / (ab * ab).sum(-1)), 0.0, 1.0)  # a repeated point: t = 0
    gap = np.linalg.norm(aq - t[..., None] * ab, axis=-1)
    seg = np.argmin(gap, axis=-1)
    return np.take_along_axis(gap, seg[..., None], -1)[..., 0], seg, np.take_along_axis(t, seg[..., None], -1)[..., 0]


def recovery(
    o: Outcomes,
    replicates: int = 1000,
    seed: int = 0,
    margin: float = MARGIN,
    level: float = 0.95,
    ci_level: float = 0.90,
) -> list[dict]:
    """For every independent checkpoint: its (optimization, correctness) failure shares, its
    distance to the interpolation curve — the polyline through the endpoints and interpolated α
    in α order — the α of the nearest point on the curve, and a test of "off the curve":

    - the CI [`distance_lo`, `distance_hi`] (`ci_level`, 90 %: two one-sided 5 % tests, as the
      findings' equivalence) is bias-corrected: the distance minus the problem bootstrap's excess
      over it, ± t(P − 1)·se over the problems (resampling.t_ci, as the findings' CIs), floored at
      0 — a distance is never negative and noise alone makes it positive, so the percentile CI
      could not reach 0;
    - `status` does_not_show (on the curve) when that CI's upper bound is within `margin`: any
      distance left is one the margin calls negligible, significant or not;
    - else shows (off the curve) when the distance is above the `level` quantile of its null
      distribution (`p_value`): the distances of checkpoints drawn, `replicates` times, from the
      nearest curve point's own per-problem rates, each curve point redrawn from its own (a
      parametric bootstrap);
    - else underpowered; not_tested when a share is undefined (a checkpoint with no samples)."""
    on_curve = [i for i, kind in enumerate(o.kinds) if kind in ("endpoint", "interpolated")]
    if len(on_curve) < 2:
        return []
    P = len(o.problems)
    weights = np.vstack([np.ones(P), bootstrap_weights(P, replicates, seed)])  # row 0: the data itself
    opt, corr = class_shares(o, weights)
    xy = np.stack([opt, corr], axis=-1)  # (1 + replicates, checkpoints, 2)
    alphas = np.array([o.alphas[i] for i in on_curve])
    rng = np.random.default_rng(seed + 1)
    rows = []
    for c in (i for i, kind in enumerate(o.kinds) if kind == "independent"):
        gap, seg, t = distance_to_curve(xy[:, c], xy[:, on_curve])
        a, b = seg[0], seg[0] + 1
        nearest = xy[0, on_curve[a]] + t[0] * (xy[0, on_curve[b]] - xy[0, on_curve[a]])
        row = {
            "checkpoint_id": o.checkpoints[c],
            "label": o.labels[c],
            "optimization_share": float(opt[0, c]),
            "correctness_share": float(corr[0, c]),
            "distance": float(gap[0]),
            "nearest_alpha": float(alphas[a] + t[0] * (alphas[b] - alphas[a])),
            "nearest_optimization_share": float(nearest[0]),
            "nearest_correctness_share": float(nearest[1]),
            "margin": margin,
        }
        null = null_distances(o, c, on_curve, (on_curve[a], on_curve[b], float(t[0])), replicates, rng)
        rows.append(row | _test(gap[0], gap[1:], null, margin, level, ci_level, P))
    return rows


def _test(
    distance: float, boot: np.ndarray, null: np.ndarray, margin: float, level: float, ci_level: float, problems: int
) -> dict:
    if not np.isfinite(distance) or not np.isfinite(null).any():
        return {
            "distance_lo": None,
            "distance_hi": None,
            "p_value": None,
            "status": "not_tested",
            "reason": "a failure share is undefined: the checkpoint or a curve point has no samples",
        }
    centre = max(0.0, 2 * distance - float(np.nanmean(boot)))
    lo, hi = (float(x) for x in t_ci(centre, boot, problems, ci_level))
    lo = max(0.0, lo)
    p_value = float((1 + (null >= distance - 1e-12).sum()) / (1 + len(null)))
    status = "does_not_show" if hi <= margin else ("shows" if p_value < 1 - level else "underpowered")
    return {"distance_lo": lo, "distance_hi": hi, "p_value": p_value, "status": status, "reason": ""}


def null_distances(
    o: Outcomes, c: int, on_curve: list[int], nearest: tuple[int, int, float], replicates: int, rng: np.random.Generator
) -> np.ndarray:
    """Distances to the curve of `replicates` checkpoints drawn with checkpoint c's samples per
    problem from the nearest curve point's per-problem rates (between curve checkpoints a and b,
    t of the way), each curve checkpoint redrawn from its own rates: the distance's distribution
    when c is on the curve."""
    a, b, t = nearest
    has = o.n > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = np.stack([np.where(has, o.counts[k] / np.maximum(o.n, 1), 0.0) for k in SHARE_CLASSES], axis=-1)
    rates = np.concatenate([rates, np.clip(1 - rates.sum(axis=-1, keepdims=True), 0, 1)], axis=-1)  # the rest
    target = (1 - t) * rates[:, a] + t * rates[:, b]
    cells = np.concatenate([rates[:, on_curve], target[:, None]], axis=1)  # problems × (curve + c) × classes
    n = np.concatenate([o.n[:, on_curve], o.n[:, [c]]], axis=1)
    drawn = rng.multinomial(
        np.broadcast_to(n, (replicates, *n.shape)), np.broadcast_to(cells, (replicates, *cells.shape))
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(n[..., None] > 0, drawn[..., :2] / np.maximum(n, 1)[..., None], 0.0)
        xy = frac.sum(axis=1) / (n > 0).sum(axis=0)[:, None]  # replicates × (curve + c) × 2
    return distance_to_curve(xy[:, -1], xy[:, :-1])[0]
