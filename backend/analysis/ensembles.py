"""pass@k curves of single checkpoints and matched-budget pools, gains over the best single at each k
(cross-fitted, with paired bootstrap CIs), and CI bands over problems for the curves the dashboard
draws (intervals.py: t, widened for skewness)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl
from scipy.stats import t as student_t

from backend.analysis.frame import Outcomes, bootstrap_weights
from backend.analysis.intervals import values_ci
from backend.analysis.passk import expected_miss, miss_ratio_table, pass_at_k_curve
from backend.analysis.resampling import half_correct
from backend.errors import UserError

GAIN_KS = (1, 10, 100)
BEST = "best single"  # the gain table's row of the per-k best single checkpoint


def passk_per_checkpoint(o: Outcomes, kmax: int | None = None, with_ci: bool = True) -> pl.DataFrame:
    """pass@k for k = 1…kmax per checkpoint, averaged over the problems it has samples of (n_problems),
    with 95 % CIs over problems (mean_with_ci; with_ci=False: lo/hi null).
    kmax defaults to sampled_kmax: a cell with no sample is left out, not a k_max of 0 (empty_cells names them)."""
    kmax = kmax or sampled_kmax(o, o.checkpoints)
    rows = []
    for c in range(len(o.checkpoints)):
        has = o.n[:, c] > 0
        curve = pass_at_k_curve(o.n[has, c], o.correct[has, c], kmax)  # its problems × k
        mean, lo, hi = mean_with_ci(curve) if with_ci else (curve.mean(axis=0), [None] * kmax, [None] * kmax)
        rows.append(
            pl.DataFrame(
                {
                    "label": o.labels[c],
                    "checkpoint_id": o.checkpoints[c],
                    "k": np.arange(1, kmax + 1),
                    "pass_at_k": mean,
                    "lo": lo,
                    "hi": hi,
                    "n_problems": int(has.sum()),
                }
            )
        )
    return pl.concat(rows)


def sampled_kmax(o: Outcomes, checkpoints: list[str]) -> int:
    """The default k_max of a pass@k curve: the fewest samples of any of these checkpoints' cells that
    hold a sample. A cell with none (a problem a checkpoint was never judged on) is left out of that
    checkpoint's mean rather than cutting every curve at k = 0."""
    n = o.n[:, [o.checkpoints.index(c) for c in checkpoints]]
    if not (n > 0).any():
        raise UserError("no judged samples of these checkpoints")
    return int(n[n > 0].min())


def empty_cells(o: Outcomes, checkpoints: list[str] | None = None) -> list[dict]:
    """The (checkpoint, problem) cells with no judged sample, which the pass@k curves leave out."""
    idx = [o.checkpoints.index(c) for c in (checkpoints or o.checkpoints)]
    return [
        {"checkpoint_id": o.checkpoints[c], "label": o.labels[c], "problem_id": o.problems[p]}
        for c in idx
        for p in np.flatnonzero(o.n[:, c] == 0)
    ]


def short_problems(o: Outcomes, checkpoints: list[str], at_least: int) -> list[dict]:
    """The problems where some of `checkpoints` has fewer than `at_least` judged samples, each with
    its reason in words: what a statistic that needs them leaves out, and says so."""
    idx = [o.checkpoints.index(c) for c in checkpoints]
    short = o.n[:, idx] < at_least
    lacking = "no judged sample" if at_least == 1 else f"fewer than {at_least} judged samples"
    return [
        {
            "problem_id": o.problems[p],
            "reason": f"{lacking} of " + ", ".join(o.labels[idx[j]] for j in np.flatnonzero(short[p])),
        }
        for p in np.flatnonzero(short.any(axis=1))
    ]


def sampled_problems(o: Outcomes, checkpoints: list[str], at_least: int) -> tuple[Outcomes, list[dict]]:
    """o on the problems where every one of `checkpoints` has at least `at_least` judged samples,
    and the problems left out (short_problems)."""
    excluded = short_problems(o, checkpoints, at_least)
    if len(excluded) == len(o.problems):
        raise UserError(
            f"no problem has at least {at_least} judged samples of every checkpoint this needs; sample more"
        )
    dropped = {e["problem_id"] for e in excluded}
    return o.on_problems(np.array([p not in dropped for p in o.problems], dtype=bool)), excluded


def merged(o: Outcomes) -> list[str]:
    """The sweep's own checkpoints (endpoints, interpolated, extrapolated): what the standard pools,
    the greedy pool and the best single are drawn from. An SFT or independently trained checkpoint
    evaluated alongside is not a point of the sweep, so it joins a pool only when the user names it."""
    own = [c for c, kind in zip(o.checkpoints, o.kinds, strict=True) if kind != "independent"]
    return own or list(o.checkpoints)


def standard_pools(o: Outcomes) -> dict[str, list[str]]:
    """all interpolated (endpoints included) and interpolated + extrapolated. The best single is
    not a fixed pool: at each k it is the checkpoint with the highest pass@k (gain_table)."""
    interp = [c for c, kind in zip(o.checkpoints, o.kinds, strict=True) if kind in ("interpolated", "endpoint")]
    pools = {"all interpolated": interp} if interp else {}
    if len(merged(o)) > len(interp) and interp:
        pools["interpolated + extrapolated"] = merged(o)
    return pools


def pool_curve(o: Outcomes, members: list[str], ks: list[int]) -> np.ndarray:
    """problems × len(ks) matched-budget pass@k of a pool (passk.expected_miss: the remainder of
    k over the members goes to a uniformly random choice of them, in expectation, exactly)."""
    return _pool_values(o.miss_tables, [o.checkpoints.index(m) for m in members], ks)


def _pool_values(tables: np.ndarray, idx: list[int], ks) -> np.ndarray:
    """(..., problems, len(ks)) pool pass@k from miss tables T[..., checkpoint, problem, k]."""
    out = np.empty((*tables.shape[:-3], tables.shape[-2], len(ks)))
    for j, k in enumerate(ks):
        try:
            out[..., j] = 1.0 - expected_miss([tables[..., c, :, :] for c in idx], int(k))
        except UserError:
            raise UserError(
                f"pass@{k} over {len(idx)} members needs {-(-k // len(idx))} samples of each; some have fewer"
            ) from None
    return out


def greedy_pool(o: Outcomes, k: int, max_members: int | None = None) -> list[str]:
    """Forward selection among the sweep's checkpoints (merged): repeatedly add the one that most
    raises mean pool pass@k."""
    candidates = [o.checkpoints.index(c) for c in merged(o)]
    return [o.checkpoints[i] for i in _greedy(o.miss_tables, k, candidates, max_members)]


def _greedy(tables: np.ndarray, k: int, candidates: list[int], max_members: int | None = None) -> list[int]:
    """Forward selection on miss tables T[checkpoint, problem, k]."""
    chosen: list[int] = []
    best_score = -1.0
    while len(chosen) < (max_members or len(candidates)):
        scores = {}
        for c in candidates:
            if c in chosen:
                continue
            try:
                scores[c] = float(_pool_values(tables, [*chosen, c], [k]).mean())
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
    """Mean over problems (axis 0) of per-problem values in [0, 1], with its CI over problems
    (intervals.values_ci: Student's t, each end widened where Hall's skewness correction reaches
    farther), clipped to [0, 1]. In closed form: exact arithmetic, deterministic, one pass for
    every k of every curve. Why not the normal interval it replaced: with a dozen problems and
    pass@k values piled at 0 and 1 it covered the true mean in 90–93 % of simulated sweeps
    (docs/findings.md). With one problem, or with every problem at the same value, the band has
    zero width: nothing varies."""
    values = np.asarray(per_problem, dtype=np.float64)
    if values.shape[0] < 2:
        mean = values.mean(axis=0)
        return mean, mean.copy(), mean.copy()
    mean, lo, hi = values_ci(values, level=level)
    return mean, np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)


def pool_bands(o: Outcomes, pools: dict[str, list[str]], kmax: int | None = None) -> pl.DataFrame:
    """Per pool (a single checkpoint is a pool of one): mean matched-budget pass@k for k = 1…kmax
    with its 95% CI over problems (mean_with_ci), the members and the problems behind it: those
    every member has samples of. kmax defaults to sampled_kmax over every pool's members; a pool
    that cannot reach some k (too few samples per member) is cut there, not extrapolated."""
    kmax = kmax or sampled_kmax(o, list(dict.fromkeys(m for members in pools.values() for m in members)))
    rows = []
    for name, members in pools.items():
        idx = [o.checkpoints.index(m) for m in members]
        sub = o.on_problems((o.n[:, idx] > 0).all(axis=1))
        ks = [k for k in range(1, kmax + 1) if len(sub.problems) and -(-k // len(members)) <= int(sub.n[:, idx].min())]
        if not ks:
            continue
        mean, lo, hi = mean_with_ci(pool_curve(sub, members, ks))
        rows.append(
            pl.DataFrame(
                {
                    "label": name,
                    "k": ks,
                    "pass_at_k": mean,
                    "lo": lo,
                    "hi": hi,
                    "members": len(members),
                    "n_problems": len(sub.problems),
                }
            )
        )
    schema = {
        "label": pl.String,
        "k": pl.Int64,
        "pass_at_k": pl.Float64,
        "lo": pl.Float64,
        "hi": pl.Float64,
        "members": pl.Int64,
        "n_problems": pl.Int64,
    }
    return pl.concat(rows) if rows else pl.DataFrame(schema=schema)


def gain_kmax(o: Outcomes, checkpoints: list[str]) -> int:
    """The largest k a cross-fitted gain reaches: one less than half of the fewest samples any of
    these checkpoints has on a problem. The gain is scored on one half of each cell's samples, and
    at k = the whole half a single checkpoint's pass@k there is one 0-or-1 per problem: the gain
    is then ruled by rare misses, and its CI excluded a true 0 in 10 % of simulated runs (at the k
    below, 1 %; tests/analysis/test_gains.py)."""
    half = int(o.n[:, [o.checkpoints.index(c) for c in checkpoints]].min()) // 2
    if half < 1:
        raise UserError(
            "gains over the best single need at least 2 samples of every pooled checkpoint on every problem"
        )
    return max(1, half - 1)


def headline_ks(kmax: int) -> list[int]:
    """k ∈ {1, 10, 100, max}: the rows a terminal shows of a gain curve that covers every k."""
    return sorted({k for k in GAIN_KS if k <= kmax} | {kmax})


GAIN_SPLITS, GAIN_REPLICATES = 4, 1000  # the gain table's resampling, F4's included (one estimator)


def gain_table(
    o: Outcomes,
    pools: dict[str, list[str]],
    greedy: bool = False,
    splits: int = GAIN_SPLITS,
    replicates: int = GAIN_REPLICATES,
    seed: int = 0,
    ks: list[int] | None = None,
    level: float = 0.95,
) -> pl.DataFrame:
    """For k = 1…kmax (gain_kmax; or the given ks): each pool's pass@k with a CI over problems, and
    its gain over the best single at that k with a CI that holds although that best was chosen on
    the data. F4 (findings.check_ensemble) is one row of this table.

    `best single` is, at each k, the sweep's checkpoint with the highest pass@k (`baseline` names
    the one chosen on all samples). That maximum of noisy estimates is optimistic, so everything
    chosen on the data is cross-fitted: each cell's samples are split in random halves (`splits`
    times, resampling.half_correct); the best single at k (and, with `greedy`, a forward-selected
    pool, chosen at k = kmax) is chosen on one half and scored with every pool on the other, then
    the halves swap, and everything is averaged. Chosen and scored on different samples, the chosen
    one's score is unbiased for its true pass@k. The `best single` and greedy rows report that
    held-out score as `pass_at_k` (lo/hi its CI) and the in-sample maximum as `pass_at_k_in_sample`;
    for a fixed pool nothing is chosen and the two are one number. CIs resample problems, the same
    draw for pool and baseline (paired). Problems lacking 2 samples of some pooled checkpoint are
    left out (sampled_problems; `n_problems` counts those kept)."""
    wanted = [*merged(o), *(m for members in pools.values() for m in members)]
    o, _ = sampled_problems(o, list(dict.fromkeys(wanted)), 2)
    candidates = [o.checkpoints.index(c) for c in merged(o)]
    named = {name: [o.checkpoints.index(m) for m in members] for name, members in pools.items()}
    kmax = gain_kmax(o, [o.checkpoints[i] for i in {*candidates, *(i for m in named.values() for i in m)}])
    ks = np.arange(1, kmax + 1) if ks is None else np.array(sorted(set(ks)), dtype=np.int64)
    if ks.min() < 1 or ks.max() > kmax:
        raise UserError(f"the gains reach k = 1…{kmax} here (half of the fewest samples per cell, less one)")
    if greedy:
        named["greedy"] = _greedy(o.miss_tables, kmax, candidates)
    single = 1.0 - o.miss_tables[:, :, ks]  # checkpoint × problem × k
    best = np.array(candidates)[np.argmax(np.round(single[candidates].mean(axis=1), 12), axis=0)]  # per k
    curves = {BEST: single[best, :, np.arange(len(ks))].T}
    curves |= {name: _pool_values(o.miss_tables, idx, ks) for name, idx in named.items()}
    W = bootstrap_weights(len(o.problems), replicates, seed) / len(o.problems)
    fit = _cross_fitted(o, named, candidates, ks, kmax, greedy, splits, W, np.random.default_rng(seed))
    rows = []
    for name, curve in curves.items():
        gain = fit.gains.get(name, np.zeros((1 + replicates, len(ks))))
        (gain_lo, gain_hi), in_sample = _centred_ci(gain, len(o.problems), level), curve.mean(axis=0)
        if name in fit.held_out:  # chosen on the data: scored where it was not chosen
            point = fit.held_out[name][0]
            lo, hi = np.clip(_centred_ci(fit.held_out[name], len(o.problems), level), 0.0, 1.0)
        else:
            point, lo, hi = mean_with_ci(curve, level)
        members = 1 if name == BEST else len(named[name])
        rows += [
            {
                "pool": name,
                "members": members,
                "k": int(k),
                "pass_at_k": point[j],
                "lo": lo[j],
                "hi": hi[j],
                "pass_at_k_in_sample": in_sample[j],
                "gain": gain[0, j],
                "gain_lo": gain_lo[j],
                "gain_hi": gain_hi[j],
                "baseline": o.checkpoints[best[j]],
                "n_problems": len(o.problems),
            }
            for j, k in enumerate(ks)
        ]
    return pl.DataFrame(rows)


@dataclass
class CrossFit:
    """Row 0 the estimate, rows 1… its bootstrap replicates, columns the ks: each pool's gain over
    the best single, and the held-out pass@k of what was chosen on the data (best single, greedy)."""

    gains: dict[str, np.ndarray]
    held_out: dict[str, np.ndarray]


def _cross_fitted(o, named, candidates, ks, kmax: int, greedy: bool, splits: int, W, rng) -> CrossFit:
    """Chosen on one half, scored on the other (weights W over problems). Each replicate chooses the
    best single again on its resampled problems: the choice is part of what varies from one sample
    of problems to the next, and a CI that kept it fixed is too narrow (measured: 16 % of CIs
    excluded a true 0 instead of 5 %)."""
    weights = np.vstack([np.full(len(o.problems), 1.0 / len(o.problems)), W])
    c_a = np.moveaxis(half_correct(o.n, o.correct, splits, rng), -1, 1)  # split × checkpoint × problem
    n_a = np.broadcast_to((o.n // 2).T, c_a.shape)
    n_all, c_all = o.n.T, o.correct.T
    halves = (miss_ratio_table(n_a, c_a, kmax), miss_ratio_table(n_all - n_a, c_all - c_a, kmax))
    fit = CrossFit(
        {name: np.zeros((len(weights), len(ks))) for name in named},
        {name: np.zeros((len(weights), len(ks))) for name in (BEST, *(["greedy"] * greedy))},
    )
    for choose, score in (halves, halves[::-1]):
        pools = {}
        for name, idx in named.items():
            if greedy and name == "greedy":  # chosen on the choosing half of each split, like the best single
                pools[name] = np.stack(
                    [_pool_values(score[s], _greedy(choose[s], kmax, candidates), ks) for s in range(splits)]
                )
            else:
                pools[name] = _pool_values(score, idx, ks)  # split × problem × k
        for j, k in enumerate(ks):
            chosen = _weighted(weights, 1.0 - choose[..., k][:, candidates])  # replicate × split × candidate
            best = np.argmax(np.round(chosen, 12), axis=-1)
            # only the chosen single is scored: its per-problem values, gathered (replicate × split × problem)
            single = (1.0 - score[..., k][:, candidates])[np.arange(splits), best]
            base = np.einsum("rp,rsp->rs", weights, single)
            fit.held_out[BEST][:, j] += base.mean(axis=1) / 2
            for name, pool in pools.items():
                value = weights @ pool[:, :, j].T  # replicate × split
                fit.gains[name][:, j] += (value - base).mean(axis=1) / 2
                if name in fit.held_out:
                    fit.held_out[name][:, j] += value.mean(axis=1) / 2
    return fit


def _centred_ci(gain: np.ndarray, problems: int, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """estimate ± t·sd of its bootstrap replicates (row 0 the estimate, rows 1… replicates), for the
    gains and the held-out pass@k of what was chosen.
    Why not their percentiles: at the largest k the best single's pass@k on half the samples is 0 or
    1 per problem, the replicates' distribution is off-centre from the estimate, and percentile CIs
    excluded a true 0 in 8 % of simulated runs (tests/analysis/test_gains.py); centred on the
    cross-fitted estimate, which is unbiased, with Student's t for the few dozen problems, ≤ 6 %."""
    half = student_t.ppf(0.5 + level / 2, max(problems - 1, 1)) * gain[1:].std(axis=0, ddof=1)
    return gain[0] - half, gain[0] + half


def _weighted(weights: np.ndarray, values: np.ndarray) -> np.ndarray:
    """(replicates, ...) weighted means over the last axis (problems) of values (..., problems)."""
    return (weights @ values.reshape(-1, values.shape[-1]).T).reshape(len(weights), *values.shape[:-1])
