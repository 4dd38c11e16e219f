"""JudgeSpec: the `judge` command's config, every option flat with its default and doc (backend/specs.py
says how a field declares its option; tests/test_specs.py keeps an option that other commands take too,
such as the sandbox and the limit overrides, declared alike in each)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from backend.grading.limits import MIN_MEMORY_MB
from backend.vocab import SandboxBackend


class JudgeSpec(BaseModel):
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
    time_limit_s: float | None = Field(
        None,
        gt=0,
        le=60,
        title="Time limit override (s)",
        json_schema_extra={"none": "the problem's", "aliases": ["--time-limit"]},
    )
    """CPU seconds per test for every problem instead of each problem's own limit; none: the problem's
    (2 s for tests given as a file)."""
    memory_limit_mb: int | None = Field(
        None,
        ge=MIN_MEMORY_MB,
        le=65536,
        title="Memory override (MB)",
        json_schema_extra={"none": "the problem's", "aliases": ["--memory-limit"]},
    )
    """Memory per test for every problem instead of each problem's own; none: the problem's (256 MB
    for tests given as a file)."""
    backend: SandboxBackend = Field("bwrap", title="Sandbox")
    """Sandbox the programs (and tool calls) run in: bwrap (default, no daemon), docker, or none (no
    isolation: trusted code only)."""

    @model_validator(mode="after")
    def _one_source_of_tests(self):
        if (self.problem is None) == (self.tests is None):
            raise ValueError("give exactly one of --problem BENCH/ID or --tests FILE.jsonl")
        return self
