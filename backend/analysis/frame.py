"""From the store's per-(checkpoint, problem) outcome counts to dense problem × checkpoint arrays.

Every analysis works on these arrays; they are small (checkpoints × problems), whatever the
number of samples behind them, which is what keeps the dashboard interactive at 5 M samples.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import polars as pl

from backend.alpha import PointKind, alpha_kind
from backend.errors import UserError
from backend.outcomes import OUTCOME_CLASSES, OutcomeClass
from backend.vocab import DIFFICULTIES

DIFFICULTY_ORDER = {d: i for i, d in enumerate(DIFFICULTIES)}


def check_solved_at(at_least: float) -> float:
    if not 0.0 < at_least <= 1.0:
        raise UserError(f"solved threshold {at_least:g} is not a pass rate in (0, 1]; e.g. 0.5 = most samples correct")
    return at_least


def point_kind(kind: str | None, alpha: float | None) -> PointKind:
    """Where a checkpoint sits on the α axis: endpoint, interpolated, extrapolated, or independent
    (not a merged point)."""
    return alpha_kind(alpha if kind == "merged" else None)


@dataclass
class Outcomes:
    """counts[class][p, c]: samples of checkpoint c on problem p in each outcome class."""

    problems: list[str]
    titles: list[str]
    difficulty: list[str | None]
    checkpoints: list[str]
    labels: list[str]
    alphas: list[float | None]
    kinds: list[str]  # point kinds
    n: np.ndarray  # problems × checkpoints
    counts: dict[str, np.ndarray]

    @property
    def correct(self) -> np.ndarray:
        return self.counts[OutcomeClass.CORRECT]

    @functools.cached_property
    def miss_tables(self) -> np.ndarray:
        """T[c, p, k] = C(n−c, k)/C(n, k) for every checkpoint, computed once: every pool evaluation
        afterwards is lookups and products (greedy selection evaluates hundreds)."""
        from backend.analysis.passk import miss_ratio_table

        kmax = int(self.n.max())
        return np.stack(
            [miss_ratio_table(self.n[:, c], self.correct[:, c], kmax) for c in range(len(self.checkpoints))]
        )

    def on_problems(self, keep: np.ndarray) -> Outcomes:
        """The same checkpoints on the problems where `keep` (a boolean per problem) holds."""
        if keep.all():
            return self  # and its miss tables, computed once
        idx = np.flatnonzero(keep)
        return Outcomes(
            [self.problems[i] for i in idx],
            [self.titles[i] for i in idx],
            [self.difficulty[i] for i in idx],
            self.checkpoints,
            self.labels,
            self.alphas,
            self.kinds,
            self.n[idx],
            {k: v[idx] for k, v in self.counts.items()},
        )

    def select(self, checkpoints: list[str]) -> Outcomes:
        idx = [self.checkpoints.index(c) for c in checkpoints]
        return Outcomes(
            self.problems,
            self.titles,
            self.difficulty,
            [self.checkpoints[i] for i in idx],
            [self.labels[i] for i in idx],
            [self.alphas[i] for i in idx],
            [self.kinds[i] for i in idx],
            self.n[:, idx],
            {k: v[:, idx] for k, v in self.counts.items()},
        )


def default_passk_selection(o: Outcomes) -> list[str]:
    """The endpoints (α = 0 and 1), which the pass@k page always starts with. No checkpoint is
    picked here by its own in-sample pass@1: that would be the optimistic maximum the gain table
    corrects; the page adds the gain table's best single at each k, chosen and held out there."""
    return [c for c, a in zip(o.checkpoints, o.alphas, strict=True) if a in (0.0, 1.0)]


def to_outcomes(counts: pl.DataFrame) -> Outcomes:
    """Dense arrays, checkpoints ordered by α (independent ones last), problems by id."""
    if counts.is_empty():
        raise UserError("no judged samples match this experiment and these filters")
    ck = counts.group_by("checkpoint_id").agg(pl.first("alpha"), pl.first("kind"), pl.first("label"))
    ck = ck.with_columns(pl.col("alpha").is_null().alias("_no_alpha")).sort(["_no_alpha", "alpha", "label"])
    pr = counts.group_by("problem_id").agg(pl.first("title"), pl.first("difficulty")).sort("problem_id")
    ci = {c: i for i, c in enumerate(ck["checkpoint_id"])}
    pi = {p: i for i, p in enumerate(pr["problem_id"])}
    rows = np.array([pi[p] for p in counts["problem_id"]])
    cols = np.array([ci[c] for c in counts["checkpoint_id"]])
    shape = (len(pi), len(ci))

    def dense(column: str) -> np.ndarray:
        out = np.zeros(shape, dtype=np.int64)
        out[rows, cols] = counts[column].to_numpy()
        return out

    alphas = ck["alpha"].to_list()
    return Outcomes(
        problems=pr["problem_id"].to_list(),
        titles=pr["title"].to_list(),
        difficulty=pr["difficulty"].to_list(),
        checkpoints=ck["checkpoint_id"].to_list(),
        labels=ck["label"].to_list(),
        alphas=alphas,
        kinds=[point_kind(k, a) for k, a in zip(ck["kind"], alphas, strict=True)],
        n=dense("n"),
        counts={c: dense(c) for c in OUTCOME_CLASSES},
    )


def bootstrap_weights(n_problems: int, replicates: int = 1000, seed: int = 0) -> np.ndarray:
    """W[b, p]: how often problem p is drawn in bootstrap replicate b (resampling problems)."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_problems, size=(replicates, n_problems))
    flat = (draws + np.arange(replicates)[:, None] * n_problems).ravel()
    return np.bincount(flat, minlength=replicates * n_problems).reshape(replicates, n_problems).astype(np.float64)


def percentile_ci(replicates: np.ndarray, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    return np.nanpercentile(replicates, 2.5, axis=axis), np.nanpercentile(replicates, 97.5, axis=axis)


def best_single(solved: np.ndarray, pass1: np.ndarray, alphas: list[float | None]) -> np.ndarray:
    """The one "best single checkpoint" rule, for every statistic that names one: the most problems
    solved, ties broken by the higher mean pass@1, then by α nearest 0.5 (the middle of the
    interpolation, the least extreme merge). solved, pass1: (..., checkpoints); returns indices."""
    distance = np.array([abs(a - 0.5) if a is not None else np.inf for a in alphas])
    order = np.argsort(distance, kind="stable")
    count, rate = solved[..., order], np.round(pass1[..., order], 12)  # equal rates compare equal
    top = count == count.max(axis=-1, keepdims=True)
    rate = np.where(top, rate, -np.inf)
    top &= rate == rate.max(axis=-1, keepdims=True)
    return order[np.argmax(top, axis=-1)]
