"""Typed boundary of the rollout stage: what to sample, and what comes back."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from backend.specs import HIDDEN
from backend.vocab import Difficulty, Setting


class SamplingSpec(BaseModel):
    """How each problem is sampled. The engines read it; every job spec carries its fields flat."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    n: int = Field(8, ge=1, le=1024, title="Samples per problem", json_schema_extra={"cli": "-n"})
    """Samples per problem. 8 gives pass@k up to k = 8 and keeps an 11-point sweep of the 40 builtin
    problems within an hour on 2 CPU cores; published pass@k curves use 16 or more."""
    temperature: float = Field(1.0, ge=0.0, le=2.0, title="Temperature")
    """Sampling temperature. 1.0 samples the policy as RL trained it; 0 is greedy."""
    top_p: float = Field(1.0, gt=0.0, le=1.0, title="top-p")
    """Nucleus sampling mass. 1.0 (off) keeps the estimate of pass@k unbiased for the policy itself."""
    max_tokens: int = Field(1024, ge=1, le=32768, title="Max tokens")
    """Completion tokens per sample (per turn in multi-turn settings). 1024 fits a reasoned program
    for the builtin problems; a longer answer is cut and usually becomes a format failure."""
    seed: int = Field(0, ge=0, le=2**31 - 1, title="Seed")
    """Base seed; every conversation and sample derives its own from it, so reruns are identical."""
    stop: tuple[str, ...] = Field((), json_schema_extra=HIDDEN)
    """Stop strings (the multi-turn settings set them per turn)."""

    def to_dict(self) -> dict:
        return self.model_dump()


class SettingChoice(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)

    setting: Setting = Field("reasoning", title="Setting")
    """reasoning: one turn; tool: Python runs in the sandbox between turns; agentic: a sandboxed
    terminal with a submit action (PAPER.md). Reasoning is the paper's main setting."""


class ProblemSelection(BaseModel):
    """Which problems a job runs on."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    bench: str = Field("builtin", title="Benchmark")
    """Problem set: builtin, lcb, ccplus, or any bench imported into the database."""
    difficulty: Difficulty | None = Field(None, title="Difficulty", json_schema_extra={"none": "all"})
    """Only problems of this difficulty; none: all of them."""
    problems: list[str] = Field([], title="Problems", json_schema_extra={"cli": "--problem", "form": False})
    """Only these problem ids (BENCH/ID); repeatable. Empty: every problem of the bench."""
    limit: int | None = Field(None, ge=1, title="At most N problems", json_schema_extra={"none": "all"})
    """At most this many problems (in id order), for a quick run; none: all."""


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
