"""Judge limits: the typed spec at the sandbox boundary (its bounds are checked by pydantic; a user's
values go through backend.specs.validate_spec, which says what is wrong in one line)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from backend.sandbox.result import TestLimits

MIN_MEMORY_MB = 16  # below this not even the Python interpreter starts


class JudgeLimits(BaseModel):
    """Per-test limits: the typed spec at the sandbox boundary. CPU time decides TLE; the wall
    clock is only a backstop for sleepers. A problem's own limits override the first two."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    time_limit_s: float = Field(2.0, gt=0, title="Time limit (s)")
    """CPU seconds per test, all the program's processes counted; 2 s is the usual contest limit."""
    memory_mb: int = Field(256, ge=MIN_MEMORY_MB, title="Memory (MB)")
    """Memory per test (cgroup peak of all its processes); 256 MB, the usual contest limit."""
    output_mb: int = Field(16, ge=1, title="Output (MB)")
    """stdout (and any file written) size cap; more is OLE."""
    max_procs: int = Field(32, ge=1, title="Processes")
    """Processes and threads inside the sandbox: enough for a thread pool, not for a fork bomb."""
    wall_factor: float = Field(3.0, ge=1, title="Wall backstop factor")
    """Wall backstop = wall_factor × time limit + 1 s, so a sleeping program cannot hold a worker."""
    compile_time_s: float = Field(30.0, gt=0, title="Compile time (s)")
    """CPU seconds for g++ (and for compiling a checker against testlib.h)."""
    compile_memory_mb: int = Field(2048, ge=64, title="Compile memory (MB)")
    """Memory for the compiler: templates-heavy C++ needs far more than the program itself."""

    def for_test(self) -> TestLimits:
        wall_s = self.wall_factor * self.time_limit_s + 1.0
        return TestLimits(self.time_limit_s, wall_s, self.memory_mb, self.output_mb, self.max_procs)

    def for_compile(self) -> TestLimits:
        return TestLimits(self.compile_time_s, 2 * self.compile_time_s, self.compile_memory_mb, 256, 32)

    def to_dict(self) -> dict:
        return self.model_dump()
