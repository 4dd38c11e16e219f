"""Typed boundary of the rollout stage: what to sample, and what comes back."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from backend.errors import UserError

SETTINGS = ("reasoning", "tool", "agentic")


@dataclass(frozen=True)
class SamplingSpec:
    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    max_tokens: int = 1024
    seed: int = 0
    stop: tuple[str, ...] = ()

    def __post_init__(self):
        if self.n < 1:
            raise UserError(f"-n must be at least 1, got {self.n}")
        if self.temperature < 0 or not 0 < self.top_p <= 1:
            raise UserError("temperature must be >= 0 and top_p in (0, 1]")
        if self.max_tokens < 1:
            raise UserError(f"--max-tokens must be at least 1, got {self.max_tokens}")

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str  # stop | length
    latency_s: float


@dataclass
class Turn:
    role: str  # system | user | assistant | tool
    content: str
    tool_output: str | None = None
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass
class Episode:
    """One sample in any setting: the transcript and the final answer."""

    turns: list[Turn]
    final_text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str = "stop"
    latency_s: float = 0.0
    submitted_code: str | None = None  # agentic: the file named by `submit`
    notes: list[str] = field(default_factory=list)
