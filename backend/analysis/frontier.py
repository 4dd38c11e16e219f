"""The frontier table: outcome-class fractions per checkpoint, with CIs over problems (intervals.py)."""

from __future__ import annotations

import numpy as np
import polars as pl

from backend.analysis.frame import Outcomes
from backend.analysis.intervals import mean_ci, problem_mean, ratio_influence
from backend.outcomes import OUTCOME_CLASSES, OutcomeClass
from backend.vocab import Averaging, choices

AVERAGING = choices(Averaging)


def frontier_table(o: Outcomes, averaging: str = "per_problem", level: float = 0.95) -> pl.DataFrame:
    """One row per checkpoint: fractions of each outcome class (and their 95% CIs), the solve
    rate, the failure-ratio coordinates and the point kind.

    per_problem: the fraction within each problem, averaged over problems (every problem counts
    the same). per_sample: pooled over all samples (problems with more samples count more).
    The CIs are over problems in both cases (intervals.mean_ci: t, widened for skewness), clipped
    to [0, 1].
    """
    if averaging not in AVERAGING:
        raise ValueError(f"averaging must be one of {AVERAGING}")
    has = o.n > 0
    rows = {"checkpoint_id": o.checkpoints, "label": o.labels, "alpha": o.alphas, "point_kind": o.kinds}
    rows["n_problems"] = has.sum(axis=0).tolist()
    rows["n_samples"] = o.n.sum(axis=0).tolist()
    rows["averaging"] = [averaging] * len(o.checkpoints)
    for cls in OUTCOME_CLASSES:
        point, lo, hi = _fraction(o.counts[cls], o.n, averaging, level)
        rows[cls], rows[f"{cls}_lo"], rows[f"{cls}_hi"] = point, lo, hi
    # solve rate = pass@1, the per-problem correct fraction averaged over problems
    point, lo, hi = _fraction(o.correct, o.n, "per_problem", level)
    rows["solve_rate"], rows["solve_rate_lo"], rows["solve_rate_hi"] = point, lo, hi
    failures = np.array(rows[OutcomeClass.OPTIMIZATION_FAILURE]) + np.array(rows[OutcomeClass.CORRECTNESS_FAILURE])
    with np.errstate(invalid="ignore", divide="ignore"):
        rows["optimization_share_of_failures"] = (np.array(rows[OutcomeClass.OPTIMIZATION_FAILURE]) / failures).tolist()
    return pl.DataFrame(rows, strict=False)


def _fraction(count: np.ndarray, n: np.ndarray, averaging: str, level: float):
    """Point estimate and CI over problems of a class fraction, per checkpoint: per_problem, the
    mean over the problems judged at that checkpoint; per_sample, the ratio Σcount/Σn (its
    influence values by the delta method)."""
    has = n > 0
    if averaging == "per_sample":
        point, psi = ratio_influence(problem_mean(count), problem_mean(n))
    else:
        point, psi = problem_mean(np.where(has, count / np.maximum(n, 1), 0.0), has)
    lo, hi = mean_ci(point, psi, level)
    point = np.where(has.any(axis=0), point, 0.0)  # a checkpoint with no judged sample: 0 of 0, as before
    return point.tolist(), np.clip(lo, 0.0, 1.0).tolist(), np.clip(hi, 0.0, 1.0).tolist()


def optimization_by_tier(tiers: pl.DataFrame) -> pl.DataFrame:
    """Store.optimization_tiers as shares of each checkpoint's judged samples: an optimization
    failure whose first failing input is 60 characters long (tier 2) is a program slow on a tiny
    input, not the efficiency failure at scale that tier 5 or 6 means."""
    columns = [c for c in tiers.columns if c.startswith("tier_")]
    shares = [(pl.col(c) / pl.col("n")).alias(c.replace("tier_", "tier ")) for c in columns]
    out = tiers.select("label", "alpha", "n", *shares)
    return out.drop("tier other") if out["tier other"].sum() == 0 else out


FORMAT_CAUSES = ("truncated", "compile_error", "no_code")


def format_causes(causes: pl.DataFrame, averaging: str = "per_problem") -> pl.DataFrame:
    """Store.format_causes per checkpoint: the share of its judged samples that are format
    failures cut at the token limit, that do not compile, and that hold no code (the three add up
    to its format_failure share), and the mean completion length in tokens. Averaged like the
    frontier table: per_problem, each problem's fraction (mean length) then the mean over problems;
    per_sample, pooled."""
    if averaging == "per_sample":
        summed = causes.group_by("checkpoint_id").agg(pl.col("n", *FORMAT_CAUSES, "tokens", "with_tokens").sum())
        return summed.select(
            "checkpoint_id",
            *[(pl.col(c) / pl.col("n")).alias(f"format_{c}") for c in FORMAT_CAUSES],
            (pl.col("tokens") / pl.col("with_tokens")).alias("completion_tokens_mean"),
        )
    per_problem = causes.select(
        "checkpoint_id",
        *[(pl.col(c) / pl.col("n")).alias(f"format_{c}") for c in FORMAT_CAUSES],
        (pl.col("tokens") / pl.col("with_tokens")).alias("completion_tokens_mean"),
    )
    return per_problem.group_by("checkpoint_id").agg(pl.all().exclude("checkpoint_id").mean())
