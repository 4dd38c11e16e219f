"""AnalysisSpec: what `analyze` computes and on which samples, declared once (backend/specs.py
says how a field declares its option). The functions in this package take plain values; the
spec is the CLI's boundary."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from backend.analysis.frame import SOLVED_AT
from backend.problems.spec import DifficultyChoice, PlatformChoice
from backend.vocab import Averaging, Setting


class AnalysisSpec(DifficultyChoice, PlatformChoice):
    model_config = ConfigDict(use_attribute_docstrings=True, extra="forbid")

    experiment: str = Field(..., min_length=1, title="Experiment")
    """Experiment id (see `db info` or `jobs list`)."""
    setting: Setting | None = Field(None, title="Setting", json_schema_extra={"none": "all"})
    """Only samples drawn in this inference setting; none: all of them."""
    averaging: Averaging = Field("per_problem", title="Averaging")
    """frontier: per_problem counts each problem the same (fractions per problem, then averaged);
    per_sample pools every sample."""
    threshold: float = Field(SOLVED_AT, gt=0, le=1, title="Solved = pass rate at least")
    """A checkpoint solves a problem when at least this share of its samples is correct (churn,
    unique solves, findings); 0.5: most samples, so one lucky sample is pass@k's business, not a solve."""
    opt_min_tier: int | None = Field(None, ge=1, le=7, title="Optimization failures from tier",
                                     json_schema_extra={"none": "every time or memory failure"})  # fmt: skip
    """A time or memory failure whose first failing test is of a tier below this (tier k: input shorter than 10^k
    characters) counts as a correctness failure in every number: a program too slow on a 60-character input
    loops or is wrong, not inefficient at scale; none: every TLE/MLE is an optimization failure."""
    pool: list[str] = Field([], title="Custom pools")
    """ensembles: a custom pool as comma-separated checkpoint ids; repeatable."""
