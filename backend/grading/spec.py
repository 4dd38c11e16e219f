"""JudgeSpec: what `python -m backend judge` judges and how, declared once (backend/specs.py says how
a field declares its option). Its limits and sandbox are the shared groups of backend/grading/limits.py."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import ConfigDict, Field, model_validator

from backend.grading.limits import LimitOverrides, SandboxChoice


class JudgeSpec(LimitOverrides, SandboxChoice):
    model_config = ConfigDict(use_attribute_docstrings=True, extra="forbid")

    code: Path = Field(title="Program")
    """Program source file."""
    problem: str | None = Field(None, title="Problem")
    """BENCH/ID of a stored problem: its tests, limits and checker."""
    tests: Path | None = Field(None, title="Tests file")
    """JSONL: {"input": str, "output": str} per line (what `problems export` writes)."""
    language: Literal["python", "cpp"] | None = Field(
        None, title="Language", json_schema_extra={"none": "from the suffix"}
    )
    """python or cpp; none: from the file's suffix (.cpp, .cc, .cxx, .c++ are C++)."""
    checker: str | None = Field(None, title="Checker", json_schema_extra={"none": "the problem's, else exact"})
    """exact | float[:TOL] | PATH to a special judge; wins over the stored problem's checker."""
    run_all: bool = Field(False, title="Run every test")
    """Run every test, not only up to the first failure."""

    @model_validator(mode="after")
    def _one_source_of_tests(self):
        if (self.problem is None) == (self.tests is None):
            raise ValueError("give exactly one of --problem BENCH/ID or --tests FILE.jsonl")
        return self
