"""The `sweep` and `eval` commands' configs, flat: every option of either command is declared in this
file, with its type, default, bounds, form label and help (backend/specs.py says how a field declares
an option; backend/cli/options.py and dashboard/form.py derive the CLI and the Launch form from it).

An option other commands take too (the sampling of `rollout`, the sandbox of `judge`, the problem
selection of `rl`) is declared again in that command's config, word for word:
tests/test_specs.py checks that every option declared in several configs is declared alike, so a
reader of one config sees all of it and the twins cannot drift apart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from backend.alpha import alpha_grid
from backend.errors import FieldError, UserError
from backend.grading.limits import MIN_MEMORY_MB
from backend.hub import hub_ref, labelled
from backend.merge.spec import Dtype
from backend.rollout.spec import SamplingSpec, check_server, check_temperature
from backend.specs import HIDDEN, validate_spec  # noqa: F401  (re-exported for the job runner)
from backend.vocab import Difficulty, EngineName, ExecutorName, PromptFormat, SandboxBackend, Setting


def stored_spec(kind: str, data: dict) -> dict:
    """A stored experiment's spec as it ran: sweeps and evals stored before `common_seeds` existed
    drew common seeds, and resuming one must go on drawing them; RL runs stored before
    `keep_checkpoints` existed kept every checkpoint, and a resume must not delete them (0: all)."""
    if kind == "rl":
        return {"keep_checkpoints": 0, **data}
    return {"common_seeds": True, **data} if kind in ("sweep", "eval") else data


def job_folders(spec) -> list[str]:
    """The checkpoint folders a job (sweep, eval or RL) reads; one prompt format serves them all."""
    return [folder for _, folder in folder_fields(spec)]


def folder_fields(spec) -> list[tuple[str, str]]:
    """(field, folder) for each checkpoint folder a job reads: an error about a folder is shown at its field."""
    if spec.kind == "sweep":
        return [("low", spec.low), ("high", spec.high), *(("independent", labelled(e)[0]) for e in spec.independent)]
    if spec.kind == "rl":
        return [("base", spec.base)]
    return [("checkpoints", labelled(e)[0]) for e in spec.checkpoints]


PATH_FIELDS = ("low", "high", "independent", "checkpoints", "base", "output_dir")  # the folders a job names


def driver_paths(spec):
    """The spec with every folder it names as this driver sees it, absolute: a detached job runs in
    the repository, a Ray task in a working directory of Ray's, neither in the caller's. The one
    place where a job's checkpoint references become paths (a hub name's resolution goes here too);
    called where a job is created, before any task runs."""

    def local(entry: str) -> str:  # a hub name stays a name: backend/hub.py pins and downloads it
        ref, label = labelled(entry)
        if ref.strip() and hub_ref(ref) is None:
            ref = str(Path(ref).expanduser().absolute())
        return f"{label}={ref}" if label else ref

    update = {}
    for name in PATH_FIELDS:
        if name in type(spec).model_fields:
            value = getattr(spec, name)
            update[name] = [local(v) for v in value] if isinstance(value, list) else local(value)
    return spec.model_copy(update=update)


def same_checkpoint(a: str, b: str) -> bool:
    """By content, not by spelling: `runs/low/` and `runs/low` (or a copy) are one checkpoint."""
    pa, pb = Path(a).expanduser().resolve(), Path(b).expanduser().resolve()
    if pa == pb:
        return True
    if not ((pa / "config.json").is_file() and (pb / "config.json").is_file()):
        return False  # a missing folder is reported on its own
    from backend.merge.io import CheckpointFolder, content_hash

    return content_hash(CheckpointFolder(pa)) == content_hash(CheckpointFolder(pb))


def tokenizers_differ(a: str, b: str) -> str | None:
    """What differs between two endpoints' tokenizers (merge/io.py tokenizer_difference), or None;
    a missing folder is reported on its own."""
    pa, pb = Path(a).expanduser(), Path(b).expanduser()
    if not ((pa / "config.json").is_file() and (pb / "config.json").is_file()):
        return None
    from backend.merge.io import tokenizer_difference

    return tokenizer_difference(pa, pb)


class JobSpec(BaseModel):
    """What sweeps and evals share: the problems, the sampling, where it runs and how it is judged."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    name: str | None = Field(None, title="Experiment name", json_schema_extra={"none": "from the endpoints"})
    """The stored experiment's name, shown by every page and export; none: named after its checkpoints
    ("α sweep low → high")."""

    common_seeds: bool = Field(False, title="Common seeds across checkpoints")
    """Sample k of problem i draws the same sampling noise at every checkpoint (seed S + i·n + k), a
    paired design; off: checkpoint c draws S + c·P·n + i·n + k (P problems), so no two samples of the
    experiment share noise. Shared noise makes neighbouring α write the same program far more often
    than the models alone would, biases matched-budget pools low and breaks the churn test's
    independent-cells null; experiments stored before this option drew common seeds."""

    # the problems
    bench: str = Field("builtin", title="Benchmark")
    """Problem set: builtin, lcb, ccplus, or any bench imported into the database."""
    problems: list[str] = Field([], title="Problems", json_schema_extra={"cli": "--problem", "form": False})
    """Only these problem ids (BENCH/ID); repeatable. Empty: every problem of the bench."""
    limit: int | None = Field(None, ge=1, title="At most N problems", json_schema_extra={"none": "all"})
    """At most this many problems (in id order), for a quick run; none: all."""
    difficulty: Difficulty | None = Field(None, title="Difficulty", json_schema_extra={"none": "all"})
    """Only problems of this difficulty; none: all of them."""

    # the prompt and the sampling (SamplingSpec, which the engines read, is made of the sampling fields)
    setting: Setting = Field("reasoning", title="Setting")
    """reasoning: one turn; tool: Python runs in the sandbox between turns; agentic: a sandboxed
    terminal with a submit action (docs/method.md, Inference settings). Reasoning is the paper's main setting."""
    prompt_format: PromptFormat = Field("auto", title="Prompt format")
    """chat: the tokenizer's chat template; plain: a text prompt (problem, instructions, answer cue)
    for base checkpoints without one; auto: chat when every checkpoint of the job has a template,
    else plain. The stored experiment records the format used."""
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

    # where it runs
    gpus: int | None = Field(None, ge=1, le=4096, title="GPUs", json_schema_extra={"none": "every GPU of the cluster"})
    """Ray executor: GPUs the engine pool uses, one engine actor per tensor_parallel_size of them and never
    more actors than points to sample (α points, checkpoints); none: every GPU of the cluster."""
    tensor_parallel_size: int = Field(1, ge=1, le=64, title="Tensor parallel size (vLLM)")
    """GPUs one vLLM engine shards the model over (vLLM's tensor_parallel_size); for models too large
    for one GPU. 1: one engine per GPU."""
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
    executor: ExecutorName = Field("local", title="Executor")
    """local: the work runs in the job's own process (judging on every core); ray: on a Ray cluster
    (a sweep: one engine actor per GPU, merges and judging as CPU tasks; RL: a task asking for GPUs)."""
    ray_address: str | None = Field(None, title="Ray address", json_schema_extra={"form": False})
    """auto (join a running cluster) or HOST:PORT; none starts a local Ray on 127.0.0.1 only."""
    gpu_busy: Literal["refuse", "wait"] = Field("refuse", title="When this node's GPUs are taken")
    """local: a job takes GPUs of its own (a lease that ends with its process); when too few are free,
    refuse in one line naming their holders, or wait until enough are."""

    # how the samples are judged
    backend: SandboxBackend = Field("bwrap", title="Sandbox")
    """Sandbox the programs (and tool calls) run in: bwrap (default, no daemon), docker, or none (no
    isolation: trusted code only)."""
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

    @field_validator("temperature")
    @classmethod
    def _temperature(cls, t: float) -> float:
        return check_temperature(t)

    @field_validator("name")
    @classmethod
    def _name(cls, v):
        return (v or "").strip() or None

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, data):
        if isinstance(data, dict) and "judge_backend" in data:  # specs stored before the sandbox had one name
            data = {k: v for k, v in data.items() if k != "judge_backend"} | {"backend": data["judge_backend"]}
        return data

    @model_validator(mode="after")
    def _tensor_parallel(self):
        if self.tensor_parallel_size > 1 and self.engine not in ("vllm", "openai"):
            raise FieldError(
                "tensor_parallel_size > 1 needs engine vllm or openai (transformers runs one model per device)",
                "tensor_parallel_size",
            )
        return self

    @model_validator(mode="after")
    def _server(self):
        check_server(self, checkpoints=self.checkpoint_count())
        if self.engine == "openai" and self.executor != "local":
            raise FieldError(
                "engine openai runs in the job's own process, one server at a time: choose executor local", "executor"
            )
        if self.engine == "openai" and getattr(self, "live_switch", False):
            raise FieldError(
                "engine openai samples the weights its server loaded, so α cannot be switched in place: turn "
                "live_switch off (merged folders, one server per α)",
                "live_switch",
            )
        return self

    def checkpoint_count(self) -> int:
        """The checkpoints the job samples: a sweep's α points and independent ones, an eval's list."""
        return (
            len(getattr(self, "alphas", []))
            + len(getattr(self, "independent", []))
            + len(getattr(self, "checkpoints", []))
        )

    def sampling(self) -> SamplingSpec:
        return SamplingSpec(**self.model_dump(include=set(SamplingSpec.model_fields)))


class SweepSpec(JobSpec):
    """`python -m backend sweep` and the Launch page's α sweep: merge θ_low and θ_high at every α,
    sample, judge and store, as one resumable job."""

    kind: Literal["sweep"] = Field("sweep", json_schema_extra=HIDDEN)
    low: str = Field(title="θ_low (α = 0)")
    """θ_low checkpoint (α = 0), a folder or a hub name org/name[@revision]:
    the low-coverage (lenient-verifier) RL run."""
    high: str = Field(title="θ_high (α = 1)")
    """θ_high checkpoint (α = 1), a folder or org/name[@revision]: the high-coverage (strict-verifier) RL run."""
    alphas: list[float] = Field(
        "-0.5:1.5:0.25", validate_default=True, title="α grid", json_schema_extra={"text": True}
    )
    """Grid: "-1:2:0.25" (inclusive range), "-0.5,0,0.5,1,1.5", or both mixed. The default spans both
    endpoints and half an endpoint-distance of extrapolation on each side, in steps of 0.25 (9 points)."""
    live_switch: bool = Field(False, title="Switch α in the loaded model (write no merged folders)")
    """Switch α in the loaded model instead of writing a merged folder per α. Off by default: merged
    folders are cached and reused by later sweeps; the switch saves disk and load time."""
    merge_dtype: Dtype = Field("auto", title="Merged folders' dtype")
    """dtype of each merged folder's weights: auto keeps the endpoints' (an RL run saves float32:
    30.5 GB per α for a 7B model); bfloat16 halves it. The merge itself computes in float32 either way."""
    keep_merges: Literal["budget", "all", "none"] = Field("budget", title="Merged folders kept after the sweep")
    """What stays of the sweep's merged folders once it ends (while it runs they are never evicted):
    budget: the merge cache evicts down to FLAB_MERGE_CACHE_GB (100), least recently used first; all:
    every folder stays, for later sweeps (a later merge may still evict them); none: they are deleted."""
    switch_endpoints: Literal["device", "host"] = Field("device", title="θ_low and θ_high live on (live switch)")
    """Where a live switch keeps the two endpoints: device (fastest switch) or host (pinned CPU
    memory, for models whose endpoints do not fit beside vLLM on the GPU; slower switches)."""
    allow_same_endpoints: bool = Field(False, json_schema_extra=HIDDEN)
    """A sweep between identical endpoints shows one model at every α, so it is refused unless asked
    for (the lab's CI-sized smoke build, whose RL runs may leave the weights where SFT put them)."""
    independent: list[str] = Field([], title="Independent checkpoints", json_schema_extra={"form": False})
    """Independently trained checkpoint evaluated alongside and overlaid on the frontier, as FOLDER or LABEL=FOLDER
    (e.g. R_2=runs/r2: its reward); repeatable."""

    @model_validator(mode="before")
    @classmethod
    def _stored(cls, data):
        if isinstance(data, dict) and "keep_merged" in data:  # specs stored before live_switch existed
            data = {**data, "live_switch": not data["keep_merged"]}
            data.pop("keep_merged")
        return data

    @field_validator("alphas", mode="before")
    @classmethod
    def _grid(cls, v):
        try:
            return alpha_grid(v)
        except UserError as err:  # the grid's own line, said at the grid's field
            raise FieldError(str(err), "alphas") from None

    @model_validator(mode="after")
    def _distinct(self):
        if not self.low.strip() or not self.high.strip():
            raise FieldError("choose both endpoints, θ_low and θ_high", "high" if self.low.strip() else "low")
        if self.live_switch and self.tensor_parallel_size > 1:
            raise FieldError(
                "the live α switch keeps whole θ_low and θ_high on every GPU and does not shard them as vLLM shards "
                "the model; with tensor_parallel_size > 1 turn live_switch off (merged folders)",
                "live_switch",
            )
        if not self.allow_same_endpoints and same_checkpoint(self.low, self.high):
            raise ValueError("θ_low and θ_high are the same checkpoint (identical content); choose two different ones")
        if diff := tokenizers_differ(self.low, self.high):
            raise ValueError(
                f"θ_low and θ_high have different tokenizers ({diff}); every merged α takes θ_low's tokenizer files, "
                "so α = 1 would not prompt as θ_high does: give both endpoints the same tokenizer files"
            )
        return self


class EvalSpec(JobSpec):
    """`python -m backend eval` and the Launch page's eval: sample and judge existing checkpoints
    (e.g. independently trained R_k runs) as one job."""

    kind: Literal["eval"] = Field("eval", json_schema_extra=HIDDEN)
    checkpoints: list[str] = Field(min_length=1, title="Checkpoint folders", json_schema_extra={"cli": "--checkpoint"})
    """Checkpoints to evaluate, folders or org/name[@revision]; repeatable (one per line in the form)."""
