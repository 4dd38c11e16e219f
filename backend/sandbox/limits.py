"""Judge limits: the typed spec at the sandbox boundary."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from backend.errors import UserError


@dataclass(frozen=True)
class JudgeLimits:
    """Per-test limits. CPU time decides TLE; the wall clock is only a backstop for sleepers."""

    time_limit_s: float = 2.0  # CPU seconds per test
    memory_mb: int = 256  # address-space cap; peak RSS is what gets reported
    output_mb: int = 16  # stdout (and any file written) size cap -> OLE
    max_procs: int = 32  # processes and threads inside the sandbox
    wall_factor: float = 3.0  # wall backstop = wall_factor * time_limit + 1 s
    compile_time_s: float = 30.0
    compile_memory_mb: int = 2048

    def __post_init__(self):
        if not self.time_limit_s > 0:
            raise UserError(f"time limit must be positive, got {self.time_limit_s}")
        if self.memory_mb < 16:
            raise UserError(f"memory limit must be at least 16 MB, got {self.memory_mb}")

    def for_test(self) -> dict:
        return {
            "cpu_s": self.time_limit_s,
            "wall_s": self.wall_factor * self.time_limit_s + 1.0,
            "memory_mb": self.memory_mb,
            "output_mb": self.output_mb,
            "max_procs": self.max_procs,
        }

    def for_compile(self) -> dict:
        return {
            "cpu_s": self.compile_time_s,
            "wall_s": 2 * self.compile_time_s,
            "memory_mb": self.compile_memory_mb,
            "output_mb": 256,
            "max_procs": 32,
        }

    def to_dict(self) -> dict:
        return asdict(self)
