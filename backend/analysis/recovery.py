"""Does interpolation recover independently trained checkpoints? Each one's distance to the
interpolation curve in the (optimization share, correctness share) plane, with a bootstrap CI
over problems. Pure numpy over `Outcomes`."""

from __future__ import annotations

import numpy as np

from backend.analysis.frame import Outcomes, bootstrap_weights, percentile_ci


def class_shares(o: Outcomes, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(optimization, correctness) failure shares per checkpoint, per row of problem weights:
    each problem's fraction of samples, averaged over the problems a checkpoint sampled."""
    has = o.n > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = [np.where(has, o.counts[c] / np.maximum(o.n, 1), 0.0) for c in ("optimization_failure",
                                                                               "correctness_failure")]  # fmt: skip
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


def recovery(o: Outcomes, replicates: int = 1000, seed: int = 0) -> list[dict]:
    """For every independent checkpoint: its (optimization, correctness) failure shares, its
    distance to the interpolation curve — the polyline through the endpoints and interpolated α
    in α order — with a 95 % percentile bootstrap CI (problems resampled, the curve and the point
    from the same draw), and the α of the nearest point on the curve. 0: the checkpoint's failure
    mix is one some interpolation reaches; the CI says how far it could be."""
    on_curve = [i for i, kind in enumerate(o.kinds) if kind in ("endpoint", "interpolated")]
    if len(on_curve) < 2:
        return []
    P = len(o.problems)
    weights = np.vstack([np.ones(P), bootstrap_weights(P, replicates, seed)])  # row 0: the data itself
    opt, corr = class_shares(o, weights)
    xy = np.stack([opt, corr], axis=-1)  # (1 + replicates, checkpoints, 2)
    alphas = np.array([o.alphas[i] for i in on_curve])
    rows = []
    for c in (i for i, kind in enumerate(o.kinds) if kind == "independent"):
        gap, seg, t = distance_to_curve(xy[:, c], xy[:, on_curve])
        lo, hi = percentile_ci(gap[1:])
        a, b = seg[0], seg[0] + 1
        nearest = xy[0, on_curve[a]] + t[0] * (xy[0, on_curve[b]] - xy[0, on_curve[a]])
        rows.append({"checkpoint_id": o.checkpoints[c], "label": o.labels[c], "optimization_share": float(opt[0, c]),
                     "correctness_share": float(corr[0, c]), "distance": float(gap[0]), "distance_lo": float(lo),
                     "distance_hi": float(hi), "nearest_alpha": float(alphas[a] + t[0] * (alphas[b] - alphas[a])),
                     "nearest_optimization_share": float(nearest[0]),
                     "nearest_correctness_share": float(nearest[1])})  # fmt: skip
    return rows
