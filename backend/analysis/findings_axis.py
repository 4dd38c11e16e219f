"""F3 and F4 of the paper's four findings (backend/analysis/findings.py is the entry point): churn
and ensembles, each chosen on one half of a cell's samples and measured on the other.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from backend.analysis.ensembles import gain_kmax, gain_table, merged, sampled_problems, standard_pools
from backend.analysis.findings_rules import Finding, FindingsSpec, Part, _ci, skipped, verdict
from backend.analysis.frame import Outcomes, best_single, bootstrap_weights
from backend.analysis.resampling import fit_additive_logit, half_correct, null_draws
from backend.errors import UserError

ENSEMBLE_CLAIM = "a matched-budget pool beats the best single"  # what F4 tests, when it cannot


def _complete_axis(o: Outcomes) -> tuple[Outcomes, list[dict]]:
    """The merged checkpoints (those with an α), on the problems each of them sampled at least
    twice (a half-split needs samples on both sides), and the problems left out."""
    axis = o.select([c for c, a in zip(o.checkpoints, o.alphas, strict=True) if a is not None])
    try:
        return sampled_problems(axis, axis.checkpoints, 2)
    except UserError:
        raise UserError(
            "the churn and ensemble tests need at least 2 samples of every merged checkpoint on a problem"
        ) from None


@dataclass
class Halves:
    """Random half-splits of each cell: A chooses, B measures. Arrays are (splits, problems, α)."""

    n_a: np.ndarray
    c_a: np.ndarray
    n_b: np.ndarray
    c_b: np.ndarray


def _halves(o: Outcomes, splits: int, rng: np.random.Generator) -> Halves:
    c_a = half_correct(o.n, o.correct, splits, rng)
    n_a = np.broadcast_to(o.n // 2, c_a.shape)
    return Halves(n_a, c_a, o.n - n_a, o.correct - c_a)


def _choose(n_a: np.ndarray, c_a: np.ndarray, alphas: list, solved_at: float) -> np.ndarray:
    """The best single per split by the solved-set rule (frame.best_single), on the choosing half."""
    rate = c_a / n_a
    return best_single((rate >= solved_at).sum(axis=-2), rate.mean(axis=-2), alphas)


def _excess_churn(n_a, c_a, n_b, c_b, alphas: list, solved_at: float) -> np.ndarray:
    """Per problem, averaged over splits: solved on half B by some α but not by the best single
    chosen on half A. (..., splits, problems, α) → (..., problems)."""
    best = _choose(n_a, c_a, alphas, solved_at)
    solved_b = c_b / n_b >= solved_at
    by_best = np.take_along_axis(solved_b, np.broadcast_to(best[..., None, None], (*solved_b.shape[:-1], 1)), -1)
    return (solved_b.any(axis=-1) & ~by_best[..., 0]).mean(axis=-2)


def check_churn(o: Outcomes, spec: FindingsSpec) -> Finding:
    """F3: more problems solved somewhere on the α axis than by the best single α, beyond what
    sampling noise gives when every α moves every problem alike."""
    rng = np.random.default_rng(spec.seed)
    o, excluded = _complete_axis(o)
    h = _halves(o, spec.splits, rng)
    per_problem = _excess_churn(h.n_a, h.c_a, h.n_b, h.c_b, o.alphas, spec.solved_at)
    p_null = fit_additive_logit(o.n, o.correct)
    null = []
    for c in null_draws(o.n, p_null, spec.null_replicates, rng):
        c_a = np.moveaxis(half_correct(o.n, c, spec.splits, rng), 0, 1)  # (replicate, split, problem, α)
        n_a = np.broadcast_to(o.n // 2, c_a.shape)
        null.append(_excess_churn(n_a, c_a, o.n - n_a, c[:, None] - c_a, o.alphas, spec.solved_at).sum(axis=-1))
    null = np.concatenate(null)
    centre, needed = float(null.mean()), float(np.quantile(null, spec.null_quantile) - null.mean())
    W = bootstrap_weights(len(o.problems), spec.replicates, spec.seed + 1)
    lo, hi = _ci(W @ per_problem - centre, spec.ci_level)
    excess = float(per_problem.sum() - centre)
    status = verdict(excess > needed, lo, hi, (needed, np.inf))
    criterion = (
        f"problems solved (≥ {spec.solved_at:.0%} of samples) by some α but not by the best single, both measured on "
        f"the half of the samples the best was not chosen on, minus the mean under a no-churn model "
        f"(logit p = a_problem + b_α, {spec.null_replicates} simulated sweeps); shows above its "
        f"{spec.null_quantile:.0%} quantile, +{needed:.2f}"
    )
    part = Part("union − best single beyond the no-churn null (problems)", status, excess, lo, hi, criterion)
    return Finding("churn", status, excess, lo, hi, criterion, [part], excluded_problems=excluded)


def check_ensemble(o: Outcomes, spec: FindingsSpec) -> Finding:
    """F4: the gain table's own number (ensembles.gain_table), one row of it: a matched-budget pool
    along the extended frontier (interpolated + extrapolated, else all interpolated) against the
    best single at pass@k, the best chosen per k and cross-fitted, its CI choosing again in every
    bootstrap replicate; k is ensemble_k_fraction of the measuring half's samples."""
    name, members = list(standard_pools(o).items())[-1]
    try:
        kept, excluded = sampled_problems(o, list(dict.fromkeys([*merged(o), *members])), 2)
        kmax = gain_kmax(kept, merged(kept))
    except UserError as err:
        return skipped("ensemble", ENSEMBLE_CLAIM, f"too few samples per cell ({err})")
    half = int(kept.n[:, [kept.checkpoints.index(c) for c in merged(kept)]].min()) // 2
    k = min(kmax, int(spec.ensemble_k_fraction * half))
    if k < 1:
        why = "too few samples per cell for a pass@k below the measuring half's size; sample more"
        return skipped("ensemble", ENSEMBLE_CLAIM, why, excluded)
    table = gain_table(o, {name: members}, seed=spec.seed, ks=[k], level=spec.ci_level)
    row = next(r for r in table.to_dicts() if r["pool"] == name)
    criterion = (
        f"pass@{k} of a matched-budget pool of {name} ({len(members)} members), minus the best single's pass@{k}; "
        f"the best single chosen at k = {k} on one half of the samples and scored with the pool on the other "
        f"(the gain table's row at k = {k}, `analyze ensembles`)"
    )
    part = gain_part(f"pool ({name}) − best single at pass@{k}", row, spec, criterion)
    return Finding(
        "ensemble",
        part.status,
        part.statistic,
        part.ci_low,
        part.ci_high,
        part.criterion,
        [part],
        excluded_problems=excluded,
    )


def gain_part(name: str, row: dict, spec: FindingsSpec, criterion: str) -> Part:
    """A gain table row as a "greater than 0" part: its own estimate and CI (centred on the
    cross-fitted estimate), the status by the one rule."""
    lo, hi = float(row["gain_lo"]), float(row["gain_hi"])
    status = verdict(lo > 0, lo, hi, (spec.min_effect, np.inf))
    return Part(name, status, float(row["gain"]), lo, hi, f"{criterion}: {spec.ci_level:.0%} CI lower bound > 0")
