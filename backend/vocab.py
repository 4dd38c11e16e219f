"""The product's enumerations, each written once (the verdicts and outcome classes, with the rule
between them, are backend/outcomes.py's). Specs use the Literal aliases as field types;
everything else iterates the tuples derived from them (`choices(Setting)`)."""

from __future__ import annotations

from typing import Literal, get_args

Setting = Literal["reasoning", "tool", "agentic"]
Difficulty = Literal["easy", "medium", "hard"]
SandboxBackend = Literal["bwrap", "docker", "none"]
EngineName = Literal["auto", "transformers", "vllm", "openai"]
ExecutorName = Literal["local", "ray"]
PromptFormat = Literal["auto", "chat", "plain"]
LossType = Literal["dapo", "grpo", "bnpo", "dr_grpo"]
VllmMode = Literal["colocate", "server"]  # TRL's GRPOConfig.vllm_mode
ImportSource = Literal["builtin", "lcb", "ccplus"]
Averaging = Literal["per_problem", "per_sample"]
Analysis = Literal["frontier", "churn", "passk", "ensembles", "findings", "recovery", "trend", "checkpoints"]


def choices(alias) -> tuple[str, ...]:
    return get_args(alias)


SETTINGS = choices(Setting)
DIFFICULTIES = choices(Difficulty)
BACKENDS = choices(SandboxBackend)
ENGINES = choices(EngineName)

# A checkpoint solves a problem when at least this share of its samples is correct. One lucky
# sample in 16 is what pass@k measures, not a solve; "most samples correct" is stable under
# resampling, so churn, unique solves and the lab's findings all count solves this way.
SOLVED_AT = 0.5
