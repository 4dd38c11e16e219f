"""The specs of `problems build-builtin` and `problems calibrate`, declared once (backend/specs.py
says how a field declares its option); the import filters live with their loaders (lcb.py, ccplus.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from backend.problems.ccplus import CCPlusConfig


class BuiltinChoice(BaseModel):
    """Which builtin problems: declared once, shared by build-builtin and calibrate."""

    model_config = ConfigDict(use_attribute_docstrings=True, extra="forbid")

    only: list[str] = Field([], title="Only these builtin problems")
    """Builtin problem slugs, such as max-subarray; repeatable. Empty: every builtin problem."""


class CalibrateSpec(BuiltinChoice, CCPlusConfig):
    """`problems calibrate`: check the judge against what is known to be right."""

    model_config = ConfigDict(use_attribute_docstrings=True, extra="forbid")

    bench: Literal["builtin", "ccplus"] = Field("builtin", title="Benchmark")
    """builtin: our calibration claims; ccplus: the dataset's own correct/incorrect submissions."""
    path: Path | None = Field(None, title="Dataset folder")
    """ccplus: the dataset (its submissions are read from there)."""
    sample: int = Field(20, ge=1, title="Problems to check")
    """ccplus: problems to check (a seeded sample of the stored ones)."""
    per_problem: int = Field(5, ge=1, title="Submissions per problem")
    """ccplus: correct and incorrect submissions each, per problem."""

    @model_validator(mode="after")
    def _ccplus_needs_its_data(self):
        if self.bench == "ccplus" and self.path is None:
            raise ValueError("calibrate --bench ccplus needs --path to the dataset, where its submissions are")
        return self
