"""Typed boundary of the rollout stage: what to sample, and what comes back. The `rollout` command's
config is here whole: RolloutSpec (which checkpoint and problems, the setting, the engine and the
sandbox) and SamplingSpec (how each problem is sampled, which the engines read)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from backend.errors import FieldError, UserError
from backend.specs import HIDDEN
from backend.vocab import Difficulty, EngineName, PromptFormat, SandboxBackend, Setting


class SamplingSpec(BaseModel):
    """How each problem is sampled. The engines read it; every job spec carries its fields flat."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    n: int = Field(8, ge=1, le=1024, title="Samples per problem", json_schema_extra={"cli": "-n"})
    """Samples per problem. 8 gives pass@k up to k = 8 and keeps an 11-point sweep of the 40 builtin
    problems within an hour on 2 CPU cores; published pass@k curves use 16 or more."""
    temperature: float = Field(1.0, ge=0.0, le=2.0, title="Temperature")
    """Sampling temperature. 1.0 samples the policy as RL trained it; 0 is greedy; between 0 and 0.01
    is refused (vLLM would sample at 0.01 instead)."""
    top_p: float = Field(1.0, gt=0.0, le=1.0, title="top-p")
    """Nucleus sampling mass. 1.0 (off) keeps the estimate of pass@k unbiased for the policy itself."""
    max_tokens: int = Field(1024, ge=1, le=32768, title="Max tokens")
    """Completion tokens per sample (per turn in multi-turn settings). 1024 fits a reasoned program
    for the builtin problems; a longer answer is cut and usually becomes a format failure."""
    seed: int = Field(0, ge=0, le=2**31 - 1, title="Seed")
    """Base seed; every conversation and sample derives its own from it, so reruns are identical."""
    stop: tuple[str, ...] = Field((), json_schema_extra=HIDDEN)
    """Stop strings (the multi-turn settings set them per turn)."""

    @field_validator("temperature")
    @classmethod
    def _temperature(cls, t: float) -> float:
        return check_temperature(t)

    def to_dict(self) -> dict:
        return self.model_dump()

    @property
    def greedy(self) -> bool:
        """vLLM samples greedily below this temperature and refuses n > 1 there (vLLM 0.31.0
        sampling_params.py:27 _SAMPLING_EPS, :549-554); every engine here draws the same line,
        which with 0 < T < 0.01 refused leaves T = 0 alone."""
        return self.temperature < GREEDY_BELOW

    def from_conversation(self, first: int) -> SamplingSpec:
        """This spec for a batch whose first conversation is the run's conversation `first`: the
        seeds of its conversations continue the run's (seed_of), so no two batches share one."""
        return self.model_copy(update={"seed": self.seed + first * self.n})


def check_temperature(t: float) -> float:
    """vLLM raises 0 < T < 0.01 to 0.01 before it tests for greedy (vLLM 0.31.0 sampling_params.py:
    28, 494-502), so the transformers engine would sample at T and vLLM at 0.01: refused for both."""
    if 0 < t < MIN_TEMPERATURE:
        raise FieldError(
            f"temperature {t:g} is below vLLM's floor of {MIN_TEMPERATURE:g}, which vLLM would sample at "
            f"instead; use 0 for greedy decoding or at least {MIN_TEMPERATURE:g}",
            "temperature",
        )
    return t


def check_server(spec, checkpoints: int) -> None:
    """engine openai's fields, checked wherever a spec is built (CLI, form, a stored spec): a server
    to sample from, one running (server_url, for a job of one checkpoint) or one the job starts per
    checkpoint (serve, a template with {model} and {port}); other engines take neither."""
    if spec.engine != "openai":
        for name in ("server_url", "serve"):
            if getattr(spec, name):
                raise FieldError(f"{name} is for engine openai; choose that engine or clear {name}", name)
        return
    if bool(spec.server_url) == bool(spec.serve):
        raise FieldError(
            "engine openai samples from a server: give server_url (a running one) or serve (a command the job runs "
            "per checkpoint), one of them",
            "serve" if spec.serve else "server_url",
        )
    if spec.server_url and checkpoints > 1:
        raise FieldError(
            f"server_url serves one checkpoint and this job samples {checkpoints}; give serve, a command the job "
            "runs for each checkpoint",
            "server_url",
        )
    from backend.rollout.server_options import parse_extra_body
    from backend.rollout.servers import check_template

    for name, check in (("serve", check_template), ("extra_body", parse_extra_body)):
        if getattr(spec, name):
            try:
                check(getattr(spec, name))
            except FieldError:
                raise
            except UserError as err:
                raise FieldError(str(err), name) from None


GREEDY_BELOW = 1e-5
MIN_TEMPERATURE = 0.01  # vLLM's _MAX_TEMP: a lower positive temperature is raised to it
TURN_STRIDE = 2**32  # vLLM keeps request seeds as int64 (v1/worker/gpu/sample/states.py:26)


def seed_of(spec_seed: int, conversation: int, n: int, sample: int = 0, turn: int = 0) -> int:
    """The vLLM seed of one sample's turn. vLLM gives the k-th of a request's n child samples the
    seed `seed + k` (v1/engine/parallel_sampling.py:69-81) and its sampler's noise depends on the
    seed alone, not on the prompt (v1/worker/gpu/sample/gumbel.py:164-198). So conversation i with
    n samples owns S + i·n … S + i·n + n − 1, and a later turn t of a multi-turn episode adds
    t·2³²: no two (conversation, sample, turn) of a run share a seed while the run has fewer than
    2³¹ samples."""
    return spec_seed + conversation * n + sample + turn * TURN_STRIDE


class ProblemChoice(Protocol):
    """The fields a config names its problems with (select_problems reads them): every job's config
    and ProblemQuery declare them."""

    bench: str | None
    problems: list[str]
    limit: int | None
    difficulty: Difficulty | None


class ProblemQuery(BaseModel):
    """`problems list` and `problems export`: which stored problems, over every bench by default."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    bench: str | None = Field(None, title="Benchmark", json_schema_extra={"none": "every bench"})
    """Problem set: builtin, lcb, ccplus, or any bench imported into the database; none: every bench."""
    problems: list[str] = Field([], title="Problems", json_schema_extra={"cli": "--problem", "form": False})
    """Only these problem ids (BENCH/ID); repeatable. Empty: every problem of the bench."""
    limit: int | None = Field(None, ge=1, title="At most N problems", json_schema_extra={"none": "all"})
    """At most this many problems (in id order), for a quick run; none: all."""
    difficulty: Difficulty | None = Field(None, title="Difficulty", json_schema_extra={"none": "all"})
    """Only problems of this difficulty; none: all of them."""


@dataclass(frozen=True)
class SettingLimits:
    max_turns: int = 8
    max_episode_tokens: int = 4096  # completion tokens over all turns of one episode
    command_time_s: float = 5.0  # CPU seconds per tool call or shell command
    command_memory_mb: int = 512
    episode_cpu_s: float = 30.0  # CPU seconds over all commands of one episode
    output_chars: int = 2000  # tool output shown back to the model, truncated


class RolloutSpec(BaseModel):
    """`python -m backend rollout`: sample one checkpoint on a problem set, store the samples. Its
    sampling options are SamplingSpec's (backend/rollout/spec.py), which the engines read."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    checkpoint: str = Field(title="Checkpoint")
    """Hugging Face checkpoint: a folder (config.json + safetensors) or a hub name, org/name[@revision]."""
    sampling: SamplingSpec = SamplingSpec()
    limits: SettingLimits = SettingLimits()
    bench: str = Field("builtin", title="Benchmark")
    """Problem set: builtin, lcb, ccplus, or any bench imported into the database."""
    problems: list[str] = Field([], title="Problems", json_schema_extra={"cli": "--problem", "form": False})
    """Only these problem ids (BENCH/ID); repeatable. Empty: every problem of the bench."""
    limit: int | None = Field(None, ge=1, title="At most N problems", json_schema_extra={"none": "all"})
    """At most this many problems (in id order), for a quick run; none: all."""
    difficulty: Difficulty | None = Field(None, title="Difficulty", json_schema_extra={"none": "all"})
    """Only problems of this difficulty; none: all of them."""
    setting: Setting = Field("reasoning", title="Setting")
    """reasoning: one turn; tool: Python runs in the sandbox between turns; agentic: a sandboxed
    terminal with a submit action (docs/method.md, Inference settings). Reasoning is the paper's main setting."""
    prompt_format: PromptFormat = Field("auto", title="Prompt format")
    """chat: the tokenizer's chat template; plain: a text prompt (problem, instructions, answer cue)
    for base checkpoints without one; auto: chat when every checkpoint of the job has a template,
    else plain. The stored experiment records the format used."""
    engine: EngineName = Field("auto", title="Engine")
    """auto: vLLM when it is installed and a GPU is present, else transformers; openai: an OpenAI-compatible server,
    running (server_url) or started by the job per checkpoint (serve)."""
    server_url: str | None = Field(None, title="Server URL (engine openai)", json_schema_extra={"none": "none"})
    """engine openai: a running OpenAI-compatible server that serves the job's one checkpoint (vllm serve, SGLang,
    transformers serve at http://127.0.0.1:8000, say); none: give serve instead."""
    serve: str | None = Field(None, title="Server command (engine openai)", json_schema_extra={"none": "none"})
    """engine openai: the command that serves one checkpoint, started by the job for each checkpoint on a free
    port of 127.0.0.1 and the job's GPUs, and stopped before the next one starts. {model} and {port} are filled in
    ({host}, {seed} and {tensor_parallel_size} too), e.g. "vllm serve {model} --port {port} --seed {seed}"."""
    api_key_env: str | None = Field(
        None, title="API key variable (engine openai)", json_schema_extra={"none": "no key"}
    )
    """engine openai: the environment variable that holds the server's API key (sent as a bearer token; the
    key itself is never stored); none: no key."""
    concurrency: int = Field(8, ge=1, le=1024, title="Requests in flight (engine openai)")
    """engine openai: requests sent at once, each for one sample with its own seed. vLLM and SGLang honour a
    request's seed at any concurrency; transformers serve seeds one process-wide generator per request, so its
    samples are reproducible at 1 only."""
    request_timeout_s: float = Field(600.0, gt=0, le=86400, title="Request timeout (s, engine openai)")
    """engine openai: seconds one request may take; a request that times out, or meets a 429, a 5xx or a
    refused connection, is retried with backoff (4 times)."""
    server_start_timeout_s: float = Field(900.0, gt=0, le=86400, title="Server start timeout (s, engine openai)")
    """engine openai with serve: seconds a started server may take to answer /v1/models; past them the job
    stops it and fails with its last log lines."""
    extra_body: str | None = Field(
        None, title="Extra request fields (JSON, engine openai)", json_schema_extra={"none": "none"}
    )
    """engine openai: a JSON object added to every request, for a server's own options (vLLM: {"top_k": 20});
    transformers serve samples only when the checkpoint's generation_config.json sets do_sample or a request
    carries {"generation_config": "{\\"do_sample\\": true}"}."""
    backend: SandboxBackend = Field("bwrap", title="Sandbox")
    """Sandbox the programs (and tool calls) run in: bwrap (default, no daemon), docker, or none (no
    isolation: trusted code only)."""

    @model_validator(mode="after")
    def _server(self):
        check_server(self, checkpoints=1)
        return self


@dataclass
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str  # stop | length | prompt_too_long | context_too_long
    latency_s: float
    seed: int | None = None  # the seed the request carried, where the engine sends one per sample


@dataclass
class Turn:
    role: str  # system | user | assistant | tool
    content: str
    tool_output: str | None = None
    seconds: float = 0.0
    seed: int | None = None  # an assistant turn: the seed its request carried (engines that send one per sample)

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
