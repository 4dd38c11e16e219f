"""pass@k curves of single checkpoints and matched-budget pools, gains with paired bootstrap CIs,
and normal-approximation CI bands over problems for the curves the dashboard draws."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import polars as pl

from backend.analysis.frame import SOLVED_AT, Outcomes, bootstrap_weights, percentile_ci
from backend.analysis.passk import expected_miss, pass_at_k_curve
from backend.errors import UserError

GAIN_KS = (1, 10, 100)


def passk_curves(o: Outcomes, kmax: int | None = None, replicates: int = 1000, seed: int = 0) -> pl.DataFrame:
    """pass@k for k = 1…kmax per checkpoint, averaged over problems, with bootstrap CIs
    (replicates=0: no CIs, lo/hi null — the bootstrap is most of the cost)."""
    kmax = kmax or int(o.n.min())
    W = bootstrap_weights(len(o.problems), replicates, seed) / len(o.problems) if replicates else None
    rows = []
    for c in range(len(o.checkpoints)):
        curve = pass_at_k_curve(o.n[:, c], o.correct[:, c], kmax)  # problems × k
        lo, hi = percentile_ci(W @ curve) if W is not None else ([None] * kmax, [None] * kmax)
        rows.append(pl.DataFrame({"label": o.labels[c], "checkpoint_id": o.checkpoints[c], "k": np.arange(1, kmax + 1),
                                  "pass_at_k": curve.mean(axis=0), "lo": lo, "hi": hi}))  # fmt: skip
    return pl.concat(rows)


def standard_pools(o: Outcomes, k: int) -> dict[str, list[str]]:
    """best single (by pass@k), all interpolated (endpoints included), interpolated + extrapolated."""
    means = [pass_at_k_curve(o.n[:, c], o.correct[:, c], k)[:, k - 1].mean() for c in range(len(o.checkpoints))]
    pools = {"best single": [o.checkpoints[int(np.argmax(means))]]}
    interp = [c for c, kind in zip(o.checkpoints, o.kinds, strict=True) if kind in ("interpolated", "endpoint")]
    merged = [c for c, kind in zip(o.checkpoints, o.kinds, strict=True) if kind != "independent"]
    if interp:
        pools["all interpolated"] = interp
    if len(merged) > len(interp):
        pools["interpolated + extrapolated"] = merged
    return pools


def pool_curve(o: Outcomes, members: list[str], ks: list[int]) -> np.ndarray:
    """problems × len(ks) matched-budget pass@k of a pool (passk.expected_miss: the remainder of
    k over the members goes to a uniformly random choice of them, in expectation, exactly)."""
    tables = o.miss_tables
    idx = [o.checkpoints.index(m) for m in members]
    out = np.empty((len(o.problems), len(ks)))
    for j, k in enumerate(ks):
        try:
            out[:, j] = 1.0 - expected_miss([tables[c] for c in idx], k)
        except UserError:
            raise UserError(
                f"pass@{k} over {len(idx)} members needs {-(-k // len(idx))} samples of each; some have fewer"
            ) from None
    return out


def greedy_pool(o: Outcomes, k: int, max_members: int | None = None) -> list[str]:
    """Forward selection: repeatedly add the checkpoint that most raises mean pool pass@k."""
    chosen: list[str] = []
    best_score = -1.0
    limit = max_members or len(o.checkpoints)
    while len(chosen) < limit:
        scores = {}
        for c in o.checkpoints:
            if c in chosen:
                continue
            try:
                scores[c] = pool_curve(o, [*chosen, c], [k]).mean()
            except UserError:  # too few samples per member for this k
                continue
        if not scores:
            break
        candidate = max(scores, key=scores.get)
        if scores[candidate] <= best_score:
            break
        chosen.append(candidate)
        best_score = scores[candidate]
    return chosen


def mean_with_ci(per_problem: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean over problems (axis 0) of per-problem values in [0, 1], with a normal-approximation CI:
    mean ± z·s/√P, s the sample standard deviation (ddof = 1), clipped to [0, 1].

    Why normal and not the bootstrap: problems are the unit of resampling (as in every other CI
    here) and the unbiased per-problem pass@k values are independent and bounded, so their mean
    is close to normal at the dozens of problems an experiment holds. The band is then exact
    arithmetic, deterministic and costs one pass, while a 1,000-replicate bootstrap for every k of
    every curve of every overlaid experiment is what kept the page without bands. With one
    problem, or with every problem at the same value, the band has zero width: nothing varies."""
    values = np.asarray(per_problem, dtype=np.float64)
    mean = values.mean(axis=0)
    if values.shape[0] < 2:
        return mean, mean.copy(), mean.copy()
    half = NormalDist().inv_cdf(0.5 + level / 2) * values.std(axis=0, ddof=1) / np.sqrt(values.shape[0])
    return mean, np.clip(mean - half, 0.0, 1.0), np.clip(mean + half, 0.0, 1.0)


def pool_bands(o: Outcomes, pools: dict[str, list[str]], kmax: int | None = None) -> pl.DataFrame:
    """Per pool (a single checkpoint is a pool of one): mean matched-budget pass@k for k = 1…kmax
    with its 95% CI over problems (mean_with_ci), the members and the problems behind it.
    kmax defaults to the fewest samples any checkpoint has on a problem; a pool that cannot reach
    some k (too few samples per member) is cut there, not extrapolated."""
    kmax = kmax or int(o.n.min())
    rows = []
    for name, members in pools.items():
        ks = [
            k
            for k in range(1, kmax + 1)
            if -(-k // len(members)) <= int(o.n[:, [o.checkpoints.index(m) for m in members]].min())
        ]
        if not ks:
            continue
        mean, lo, hi = mean_with_ci(pool_curve(o, members, ks))
        rows.append(pl.DataFrame({"label": name, "k": ks, "pass_at_k": mean, "lo": lo, "hi": hi,
                                  "members": len(members), "n_problems": len(o.problems)}))  # fmt: skip
    schema = {"label": pl.String, "k": pl.Int64, "pass_at_k": pl.Float64, "lo": pl.Float64, "hi": pl.Float64,
              "members": pl.Int64, "n_problems": pl.Int64}  # fmt: skip
    return pl.concat(rows) if rows else pl.DataFrame(schema=schema)


def gain_ks(o: Outcomes) -> list[int]:
    """k ∈ {1, 10, 100, max}, keeping those every checkpoint has enough samples for."""
    kmax = int(o.n.min())
    return sorted({k for k in GAIN_KS if k <= kmax} | {kmax})


def gain_table(
    o: Outcomes, pools: dict[str, list[str]], baseline: str = "best single", replicates: int = 1000, seed: int = 0
) -> pl.DataFrame:
    """Each pool's pass@k and its gain over the baseline pool, with paired bootstrap CIs: the
    same resampled problems for both, so shared problem difficulty cancels out of the gain."""
    ks = gain_ks(o)
    W = bootstrap_weights(len(o.problems), replicates, seed) / len(o.problems)
    base = pool_curve(o, pools[baseline], ks)
    rows = []
    for name, members in pools.items():
        try:
            curve = pool_curve(o, members, ks)
        except UserError:
            continue
        gain_lo, gain_hi = percentile_ci(W @ (curve - base))
        lo, hi = percentile_ci(W @ curve)
        for i, k in enumerate(ks):
            rows.append({"pool": name, "members": len(members), "k": k, "pass_at_k": curve[:, i].mean(), "lo": lo[i], "hi": hi[i],
                         "gain": (curve[:, i] - base[:, i]).mean(), "gain_lo": gain_lo[i], "gain_hi": gain_hi[i]})  # fmt: skip
    return pl.DataFrame(rows)


def unique_solves(o: Outcomes, at_least: float = SOLVED_AT) -> list[str]:
    """Problems some extrapolated checkpoint solves (pass rate ≥ at_least) and no interpolated or
    endpoint checkpoint does: what extrapolation adds to an interpolation-only pool."""
    from backend.analysis.churn import solved_sets

    kinds, solved = np.array(o.kinds), solved_sets(o, at_least)
    extra = solved[:, kinds == "extrapolated"].any(axis=1)
    inter = solved[:, np.isin(kinds, ["interpolated", "endpoint"])].any(axis=1)
    return [o.problems[p] for p in np.flatnonzero(extra & ~inter)]
