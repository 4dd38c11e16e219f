"""Per-problem churn along the α axis: which problems each checkpoint solves, and how that moves."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl

from backend.alpha import alpha_text
from backend.analysis.churn_excess import churn_excess
from backend.analysis.frame import DIFFICULTY_ORDER, Outcomes, best_single, check_solved_at
from backend.analysis.resampling import fit_additive_logit, null_draws
from backend.outcomes import OutcomeClass
from backend.vocab import SOLVED_AT

ORDERINGS = ("difficulty", "cluster")
NULL_CELLS = 2_000_000
"""At most this many simulated cells (sweeps × problems × checkpoints) for churn's no-churn null,
and at least MIN_NULL sweeps: every churn view computes it, and at the design scale (1,000
problems × 20 checkpoints × 250 samples) 500 sweeps took 24 s on the shared machine, 100 about 5."""
MIN_NULL = 100


def solve_rates(o: Outcomes) -> np.ndarray:
    """problems × checkpoints pass rate (correct / samples); NaN where nothing was sampled."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(o.n > 0, o.correct / np.maximum(o.n, 1), np.nan)


def solve_matrix(o: Outcomes) -> pl.DataFrame:
    """Long form for the heatmap: problem, checkpoint, rate, counts."""
    rates = solve_rates(o)
    p_idx, c_idx = np.meshgrid(np.arange(len(o.problems)), np.arange(len(o.checkpoints)), indexing="ij")
    p_idx, c_idx = p_idx.ravel(), c_idx.ravel()
    return pl.DataFrame(
        {
            "problem_id": [o.problems[i] for i in p_idx],
            "title": [o.titles[i] for i in p_idx],
            "checkpoint_id": [o.checkpoints[i] for i in c_idx],
            "label": [o.labels[i] for i in c_idx],
            "alpha": [o.alphas[i] for i in c_idx],
            "rate": rates.ravel(),
            OutcomeClass.CORRECT: o.correct.ravel(),
            "n": o.n.ravel(),
        },
        strict=False,
    )


def solved_sets(o: Outcomes, at_least: float = SOLVED_AT) -> np.ndarray:
    """problems × checkpoints booleans: pass rate at least `at_least` (frame.SOLVED_AT)."""
    return np.nan_to_num(solve_rates(o), nan=0.0) >= check_solved_at(at_least)


def churn_stats(o: Outcomes, at_least: float = SOLVED_AT, null_replicates: int = 500, seed: int = 0) -> dict:
    """Flips between α-neighbours, problems solved only inside/outside [0, 1], the union of solved
    problems against the best single checkpoint, and Jaccard similarities between solved sets.
    `union_excess` is F3 itself (churn_excess.churn_excess at the findings' defaults and this
    threshold): the union's excess over the best single, cross-fitted, with its CI over problems,
    level and status. The flips stand beside what sampling noise alone gives under a no-churn model
    (`no_churn_null`): `expected_gained`/`expected_lost` per flip and `total_flips_expected`
    (`null_replicates` sweeps, fewer on a large sweep: NULL_CELLS).
    Only merged checkpoints (those with an α) take part in the α-axis statistics."""
    solved = solved_sets(o, at_least)
    on_axis = [i for i, a in enumerate(o.alphas) if a is not None]
    pairs = list(itertools.pairwise(on_axis))
    null_replicates = min(null_replicates, max(MIN_NULL, NULL_CELLS // max(o.n.size, 1)))
    null = no_churn_null(o, at_least, pairs, null_replicates, seed)
    gained, lost = _flips(solved, pairs)
    flips = [
        {
            "from": o.labels[a],
            "to": o.labels[b],
            "alpha_from": o.alphas[a],
            "alpha_to": o.alphas[b],
            "gained": int(g),
            "lost": int(x),
            "expected_gained": float(eg),
            "expected_lost": float(ex),
        }
        for (a, b), g, x, eg, ex in zip(
            pairs, gained, lost, null["gained"].mean(axis=0), null["lost"].mean(axis=0), strict=True
        )
    ]
    inside = [i for i in on_axis if 0.0 <= o.alphas[i] <= 1.0]
    outside = [i for i in on_axis if not 0.0 <= o.alphas[i] <= 1.0]
    in_any = solved[:, inside].any(axis=1) if inside else np.zeros(len(o.problems), bool)
    out_any = solved[:, outside].any(axis=1) if outside else np.zeros(len(o.problems), bool)
    per_ckpt = solved.sum(axis=0)
    best = int(_best(solved, solve_rates(o), o.alphas)) if len(per_ckpt) else 0
    inter = (solved[:, :, None] & solved[:, None, :]).sum(axis=0)
    union = (solved[:, :, None] | solved[:, None, :]).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        jaccard = np.where(union > 0, inter / np.maximum(union, 1), np.nan)
    union_solved = int(solved.any(axis=1).sum())
    return {
        "solved_at": at_least,
        "flips": flips,
        "total_flips": sum(f["gained"] + f["lost"] for f in flips),
        "total_flips_expected": float((null["gained"].sum(axis=1) + null["lost"].sum(axis=1)).mean()),
        "solved_only_inside": [o.problems[p] for p in np.flatnonzero(in_any & ~out_any)],
        "solved_only_outside": [o.problems[p] for p in np.flatnonzero(out_any & ~in_any)],
        "union_solved": union_solved,
        "best_single": {"checkpoint_id": o.checkpoints[best], "label": o.labels[best], "solved": int(per_ckpt[best])},
        "union_excess": _union_excess(o, at_least, seed),
        "null_replicates": null_replicates,
        "solved_per_checkpoint": dict(zip(o.labels, per_ckpt.tolist(), strict=True)),
        "jaccard": {"labels": o.labels, "matrix": jaccard.tolist()},
    }


def _flips(solved: np.ndarray, pairs: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """Problems gained and lost from a to b, per pair: solved (..., problems, checkpoints) → (..., pairs) each."""
    if not pairs:
        return np.zeros((*solved.shape[:-2], 0), int), np.zeros((*solved.shape[:-2], 0), int)
    a, b = (np.array(side) for side in zip(*pairs, strict=True))
    return (~solved[..., a] & solved[..., b]).sum(axis=-2), (solved[..., a] & ~solved[..., b]).sum(axis=-2)


def _best(solved: np.ndarray, rates: np.ndarray, alphas: list) -> np.ndarray:
    """The best single (frame.best_single) of each sweep: solved, rates (..., problems, checkpoints)."""
    with np.errstate(invalid="ignore"):
        pass1 = np.nan_to_num(np.nanmean(rates, axis=-2), nan=0.0)
    return best_single(solved.sum(axis=-2), pass1, alphas)


def no_churn_null(
    o: Outcomes, at_least: float, pairs: list[tuple[int, int]], replicates: int = 500, seed: int = 0
) -> dict[str, np.ndarray]:
    """The flips of `replicates` sweeps simulated from a no-churn model (resampling.fit_additive_logit
    and null_draws: logit p = a_problem + b_checkpoint, each cell Binomial(n, p)): per sweep,
    `gained` and `lost` per α pair. Their means are what sampling noise alone gives when every α
    moves every problem alike, with every problem's n as sampled: a description beside the counts,
    not a test (F3, `union_excess`, is the test, and needs no model of the curves)."""
    check_solved_at(at_least)
    out = {"gained": [], "lost": []}
    rng = np.random.default_rng(seed)
    for c in null_draws(o.n, fit_additive_logit(o.n, o.correct), replicates, rng):
        with np.errstate(invalid="ignore", divide="ignore"):
            rates = np.where(o.n > 0, c / np.maximum(o.n, 1), np.nan)
        solved = np.nan_to_num(rates, nan=0.0) >= at_least
        gained, lost = _flips(solved, pairs)
        out["gained"].append(gained)
        out["lost"].append(lost)
    return {k: np.concatenate(v) for k, v in out.items()}


def _union_excess(o: Outcomes, at_least: float, seed: int) -> dict:
    """F3's estimator (findings_axis.check_churn), with the findings' defaults at this threshold."""
    from backend.analysis.findings_rules import FindingsSpec

    spec = FindingsSpec(solved_at=at_least, seed=seed)
    return churn_excess(o, at_least, spec.ci_level, spec.splits, spec.min_effect, seed).to_dict()


def order_problems(o: Outcomes, method: str = "difficulty") -> list[str]:
    """Heatmap row order: by difficulty, then by the α of the peak solve rate; or hierarchical
    clustering (average linkage) of the problems' solve-rate profiles."""
    if method not in ORDERINGS:
        raise ValueError(f"ordering must be one of {ORDERINGS}")
    rates = np.nan_to_num(solve_rates(o), nan=0.0)
    if method == "cluster" and len(o.problems) > 2:
        from scipy.cluster.hierarchy import leaves_list, linkage

        return [o.problems[i] for i in leaves_list(linkage(rates, method="average"))]
    axis = np.array([a if a is not None else np.inf for a in o.alphas])
    peak = axis[np.argmax(rates, axis=1)] if rates.size else np.zeros(0)
    unsolved = rates.max(axis=1) == 0 if rates.size else np.zeros(0, bool)
    key = [
        (DIFFICULTY_ORDER.get(d or "", 3), bool(u), float(a), p)
        for d, u, a, p in zip(o.difficulty, unsolved, peak, o.problems, strict=True)
    ]
    return [k[3] for k in sorted(key)]


def flipping_problems(o: Outcomes, at_least: float = SOLVED_AT) -> list[dict]:
    """The problems whose solved/unsolved state changes somewhere along α: their title, difficulty,
    number of flips between α-neighbours, and the α ranges (runs of neighbouring grid points) where
    each is solved, e.g. "-1 … 0, 1.5"."""
    solved = solved_sets(o, at_least)
    on_axis = sorted((i for i, a in enumerate(o.alphas) if a is not None), key=lambda i: o.alphas[i])
    rows = []
    for p in range(len(o.problems)):
        pattern = [bool(solved[p, c]) for c in on_axis]
        flips = sum(a != b for a, b in itertools.pairwise(pattern))
        if not flips:
            continue
        runs = [list(g) for key, g in itertools.groupby(zip(pattern, on_axis, strict=True), key=lambda t: t[0]) if key]
        ranges = [
            alpha_text(o.alphas[r[0][1]]) + (f" … {alpha_text(o.alphas[r[-1][1]])}" if len(r) > 1 else "") for r in runs
        ]
        first_flip = next(i for i in range(len(pattern) - 1) if pattern[i] != pattern[i + 1])
        solved_at, unsolved_at = sorted((first_flip, first_flip + 1), key=lambda i: not pattern[i])
        rows.append(
            {
                "problem_id": o.problems[p],
                "title": o.titles[p],
                "difficulty": o.difficulty[p],
                "flips": flips,
                "solved at α": ", ".join(ranges),  # the first flip's two sides, for a samples view link:
                "alpha_solved": o.alphas[on_axis[solved_at]],
                "alpha_unsolved": o.alphas[on_axis[unsolved_at]],
            }
        )
    return rows


def unique_solves(o: Outcomes, at_least: float = SOLVED_AT) -> list[str]:
    """Problems some extrapolated checkpoint solves (pass rate ≥ at_least) and no interpolated or
    endpoint checkpoint does: what extrapolation adds to an interpolation-only pool. A count with no
    test: read it beside unique_solves_expected."""
    return [o.problems[p] for p in np.flatnonzero(_unique(solved_sets(o, at_least), o.kinds))]


def _unique(solved: np.ndarray, kinds: list[str]) -> np.ndarray:
    """(..., problems) booleans from solved (..., problems, checkpoints)."""
    kinds = np.array(kinds)
    extra = solved[..., kinds == "extrapolated"].any(axis=-1)
    return extra & ~solved[..., np.isin(kinds, ["interpolated", "endpoint"])].any(axis=-1)


def unique_solves_expected(o: Outcomes, at_least: float = SOLVED_AT, draws: int = 400, seed: int = 0) -> float:
    """The number of unique solves expected from sampling noise alone if every α solved alike: each
    problem's judged samples on the merged checkpoints dealt out at random among them, every cell
    keeping its n (a multivariate hypergeometric draw, `draws` times). Sweeps of identical
    checkpoints report at least one unique solve more often than not, so a count is evidence only
    where it stands well above this."""
    axis = [i for i, a in enumerate(o.alphas) if a is not None]
    if not axis:
        return 0.0
    n, good = o.n[:, axis], o.correct[:, axis].sum(axis=1)
    rng = np.random.default_rng(seed)
    left_n = np.broadcast_to(n.sum(axis=1), (draws, len(o.problems))).copy()
    left_good = np.broadcast_to(good, (draws, len(o.problems))).copy()
    dealt = np.zeros((draws, *n.shape), dtype=np.int64)
    for j in range(n.shape[1]):
        take = np.broadcast_to(n[:, j], left_n.shape)
        drawn = rng.hypergeometric(left_good, left_n - left_good, take)
        dealt[..., j], left_n, left_good = drawn, left_n - take, left_good - drawn
    with np.errstate(invalid="ignore", divide="ignore"):
        solved = np.where(n > 0, dealt / np.maximum(n, 1), 0.0) >= check_solved_at(at_least)
    return float(_unique(solved, [o.kinds[i] for i in axis]).sum(axis=-1).mean())
