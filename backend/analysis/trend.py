"""The failure shares against α over the whole sweep: a linear trend with its CI over problems
(intervals.mean_ci, closed form), and simultaneous 95 % bands (max-statistic bootstrap) — bands
that hold at every α at once, where the per-α CIs of the Frontier page hold at each α alone. Pure
numpy over `Outcomes`."""

from __future__ import annotations

import numpy as np

from backend.analysis.frame import Outcomes, bootstrap_weights
from backend.analysis.intervals import mean_ci, problem_mean
from backend.analysis.recovery import SHARE_CLASSES, class_shares

CLASS_NAMES = SHARE_CLASSES


def trend(o: Outcomes, replicates: int = 2000, seed: int = 0, level: float = 0.95) -> dict:
    """{"slopes": slopes(o, level); "bands": per class and α, the share and its simultaneous band}.

    The band: with sd_α the bootstrap standard deviation of the share at α, c is the `level`
    quantile over replicates of max_α |share*_α − share_α| / sd_α, and the band is share ± c·sd_α.
    Because c covers the largest deviation along the whole grid, the true curve lies inside the
    band at every α at once in about `level` of samples of problems."""
    merged = [i for i, a in enumerate(o.alphas) if a is not None]
    if len(merged) < 2:
        return {"slopes": [], "bands": []}
    P = len(o.problems)
    weights = np.vstack([np.ones(P), bootstrap_weights(P, replicates, seed)])
    alphas = np.array([o.alphas[i] for i in merged])
    bands = []
    for name, shares in zip(CLASS_NAMES, class_shares(o, weights), strict=True):
        s = shares[:, merged]  # (1 + replicates, α)
        sd = s[1:].std(axis=0, ddof=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            worst = np.nanmax(np.where(sd > 0, np.abs(s[1:] - s[0]) / sd, 0.0), axis=1)
        c = float(np.quantile(worst, level))
        bands += [
            {
                "class": name,
                "alpha": float(a),
                "share": float(v),
                "band_lo": float(v - c * d),
                "band_hi": float(v + c * d),
                "critical": c,
            }
            for a, v, d in zip(alphas, s[0], sd, strict=True)
        ]
    return {"slopes": slopes(o, level), "bands": bands}


def slopes(o: Outcomes, level: float = 0.95) -> list[dict]:
    """Per failure class, the least-squares slope on α of its share (each problem's fraction,
    averaged over the problems judged at that α) over the merged checkpoints, with its CI over
    problems. The slope is a fixed linear combination of the per-α means, so its influence values
    are the same combination of theirs (intervals.problem_mean)."""
    merged = [i for i, a in enumerate(o.alphas) if a is not None]
    if len(merged) < 2:
        return []
    alphas = np.array([o.alphas[i] for i in merged])
    centred = alphas - alphas.mean()
    weights = centred / (centred @ centred)
    has = o.n[:, merged] > 0
    out = []
    for name in SHARE_CLASSES:
        fraction = np.where(has, o.counts[name][:, merged] / np.maximum(o.n[:, merged], 1), 0.0)
        mean, psi = problem_mean(fraction, has)
        slope = float(mean @ weights)
        lo, hi = mean_ci(slope, psi @ weights, level)
        out.append({"class": name, "slope": slope, "slope_lo": float(lo), "slope_hi": float(hi)})
    return out
