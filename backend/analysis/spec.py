"""AnalysisSpec: what `analyze` computes and on which samples, declared once (backend/specs.py
says how a field declares its option). The functions in this package take plain values; the
spec is the CLI's boundary."""

from __future__ import annotations

import datetime
from dataclasses import fields

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from backend.alpha import alpha_grid
from backend.store_queries import SampleFilter
from backend.vocab import SOLVED_AT, Averaging, Difficulty, Setting


class AnalysisSpec(BaseModel):
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
    opt_min_tier: int | None = Field(
        None,
        ge=1,
        le=7,
        title="Optimization failures from tier",
        json_schema_extra={"none": "every time or memory failure"},
    )
    """A time or memory failure whose first failing test is of a tier below this (tier k: input shorter than 10^k
    characters) counts as a correctness failure in every number, a sensitivity check (a program too slow on a
    60-character input may loop or be wrong); none, the default: every TLE/MLE is an optimization failure, the
    method's classes (docs/findings.md, "Time-outs on tiny inputs")."""
    ensemble_k: int = Field(4, ge=1, le=10_000, title="F4's k")
    """findings: the k of F4's pass@k gain, fixed before the counts are seen (4: what 16 samples per cell reach
    cross-fitted); a problem with fewer than 2(k + 1) judged samples of some checkpoint is left out and listed,
    never k lowered."""
    k: int | None = Field(None, ge=1, le=1_000_000, title="k of pass@k", json_schema_extra={"none": "10"})
    """checkpoints: the k of its pass@k column (the unbiased estimator); none: 10, or the most samples a
    problem has if fewer."""
    pool: list[str] = Field([], title="Custom pools")
    """ensembles: a custom pool as comma-separated checkpoint ids; repeatable."""
    difficulty: Difficulty | None = Field(None, title="Difficulty", json_schema_extra={"none": "all"})
    """Only problems of this difficulty; none: all of them."""
    platform: str | None = Field(None, title="Platform", json_schema_extra={"none": "all"})
    """Only problems from this platform (LiveCodeBench's atcoder, codeforces, leetcode); none: all."""
    since: str | None = Field(None, title="Since (YYYY-MM-DD)", json_schema_extra={"none": "no limit"})
    """Only problems whose contest_date is on or after this day (included, as in LiveCodeBench); a problem
    without a date is then left out, and counted in words."""
    until: str | None = Field(None, title="Until (YYYY-MM-DD)", json_schema_extra={"none": "no limit"})
    """Only problems whose contest_date is on or before this day (included); a problem without a date is then
    left out."""
    window: str | None = Field(None, title="LiveCodeBench window", json_schema_extra={"none": "every date"})
    """A LiveCodeBench version's contest window, as its README defines the versions: release_v1 … release_v6
    (May 2023 to each release's last month), v1 … v6 (one release), vN_vM; instead of --since/--until."""

    @field_validator("since", "until")
    @classmethod
    def _day(cls, v: str | None) -> str | None:
        if v is None:
            return None
        try:
            return datetime.date.fromisoformat(v.strip()).isoformat()
        except ValueError:
            raise ValueError(f"{v!r} is not a day written YYYY-MM-DD, e.g. 2024-05-01") from None

    @field_validator("window")
    @classmethod
    def _window(cls, v: str | None) -> str | None:
        from backend.problems.lcb import release_numbers

        if v is not None:
            release_numbers(v)  # one line naming the valid versions
        return v

    @model_validator(mode="after")
    def _one_window(self):
        if self.window and (self.since or self.until):
            raise ValueError(f"--window {self.window} names its own dates; give --window or --since/--until, not both")
        if self.since and self.until and self.since > self.until:
            raise ValueError(f"--since {self.since} is after --until {self.until}; swap them")
        return self

    def dates(self) -> tuple[str | None, str | None]:
        """(since, until): the named window's, else the days given."""
        if self.window:
            from backend.problems.lcb import release_window

            return release_window(self.window)
        return self.since, self.until

    def sample_filter(self) -> SampleFilter:
        """The samples counted and the counting rule, as the store's queries and the dashboard take them."""
        since, until = self.dates()
        chosen = {f.name: getattr(self, f.name) for f in fields(SampleFilter)}
        return SampleFilter(**chosen | {"since": since, "until": until})


class PowerSpec(BaseModel):
    """A planned sweep and the effect sizes its findings are powered for."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True, extra="forbid")

    problems: int = Field(12, ge=2, le=2000, title="Problems")
    """Problems the findings are measured on (for the miniature lab: its separating problems)."""
    n: int = Field(16, ge=2, le=1024, title="Samples per problem")
    """Samples per (problem, α) cell."""
    alphas: list[float] = Field(
        "-0.5:1.5:0.25", validate_default=True, title="α grid", json_schema_extra={"text": True}
    )
    """The swept α, written as for `sweep`; it must hold 0 and 1 (the endpoints every finding compares)."""
    solve_rate: float = Field(0.5, gt=0, lt=1, title="Typical solve rate")
    """The median problem's solve rate at the centre of its swing along α (logit⁻¹ of its b_p)."""
    problem_sd: float = Field(1.0, ge=0, le=10, title="Problem spread (logit sd)")
    """How much problems differ in difficulty, on the logit scale (1.0: the middle 68 % of problems
    between about 27 % and 73 % when the typical rate is 50 %)."""
    opt_share_low: float = Field(0.7, gt=0, lt=1, title="Optimization share of failures at α = 0")
    """Share of θ_low's failures that are optimization failures (TLE/MLE)."""
    opt_share_high: float = Field(0.3, gt=0, lt=1, title="Optimization share of failures at α = 1")
    """Share of θ_high's failures that are optimization failures; equal to the α = 0 share means no frontier."""
    churn: float = Field(1.0, ge=0, le=100, title="Churn (logit amplitude along α)")
    """How far each problem's solve rate swings along α around its own best α: 0 is no churn (every α
    alike); 1 swings a 50 % problem between 27 % and 73 %."""
    runs: int = Field(200, ge=1, le=100_000, title="Simulated sweeps")
    """Each run is one simulated sweep tested by the findings module; 200 puts a power of 0.8
    within about ±0.06 (95 %)."""
    seed: int = Field(0, title="Seed")
    """Seeds the simulated sweeps (the findings' own resampling keeps FindingsSpec's seed)."""

    @field_validator("alphas", mode="before")
    @classmethod
    def _grid(cls, v):
        grid = alpha_grid(v)
        if 0.0 not in grid or 1.0 not in grid:
            raise ValueError("the α grid must hold both endpoints, 0 and 1: every finding compares them")
        return grid

    def null(self) -> PowerSpec:
        """The same design with no effect: no frontier, no churn."""
        return self.model_copy(update={"opt_share_high": self.opt_share_low, "churn": 0.0})
