"""The RL job's spec. GRPO hyperparameters keep TRL's names (GRPOConfig) and say why their defaults
differ from TRL's where they do; the rest says what to train on and where. Importing this module
imports no torch: the dashboard validates the form with it."""

from __future__ import annotations

import importlib.util
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from backend.errors import FieldError
from backend.rl.rewards import REWARDS, parse_reward
from backend.specs import HIDDEN
from backend.vocab import Difficulty, ExecutorName, LossType, PromptFormat, SandboxBackend, VllmMode

KEPT_WARN = 0.5  # a save in the base's dtype that keeps the update of fewer of the moved weights says so
Precision = Literal["auto", "bf16", "fp32"]
Toggle = Literal["auto", "on", "off"]
Sharding = Literal["fsdp", "ddp"]
# TRL's report_to, as transformers names its trackers (integration_utils.INTEGRATION_TO_CALLBACK), and the
# package each one imports
TRACKERS = {
    "trackio": "trackio",
    "wandb": "wandb",
    "mlflow": "mlflow",
    "tensorboard": "tensorboard",
    "comet_ml": "comet_ml",
    "clearml": "clearml",
    "neptune": "neptune",
    "swanlab": "swanlab",
    "dvclive": "dvclive",
}
ReportTo = Literal["none", "all", "trackio", "wandb", "mlflow", "tensorboard", "comet_ml", "clearml", "neptune",
                   "swanlab", "dvclive"]  # fmt: skip


class RLSpec(BaseModel):
    """`python -m backend rl` and the Launch page's RL form: TRL's GRPOTrainer as a resumable job,
    rewarded by the sandbox judge."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    kind: Literal["rl"] = Field("rl", json_schema_extra=HIDDEN)
    base: str = Field(min_length=1, title="Base / SFT checkpoint")
    """Base/SFT checkpoint the policy starts from, a folder or org/name[@revision]
    (chat template or not: see prompt_format)."""
    output_dir: str = Field(min_length=1, title="Output folder", json_schema_extra={"cli": "--out"})
    """Output folder for checkpoint-N folders and the final model."""
    reward: str = Field("R_inf", title="Reward", json_schema_extra={"choices": REWARDS})
    """R_k: 1 iff every test with input < 10^k characters passes (low k = lenient verifier); R_inf: the
    whole suite (strict); partial_discrete / partial_continuous: credit per tier / test; repair:R_k
    adds online repair prompts. R_inf is the paper's high-coverage endpoint."""
    steps: int = Field(100, ge=1, le=1_000_000, title="Steps (max_steps)")
    """GRPOConfig.max_steps. 100 steps show a reward trend on a small model; real runs use thousands."""
    num_generations: int = Field(8, ge=2, le=256, title="num_generations")
    """Completions per prompt (a GRPO group). 8 is TRL's default: enough spread for group advantages."""
    per_device_train_batch_size: int = Field(8, ge=1, le=4096, title="per_device_train_batch_size")
    """Completions per device step; times the training processes, a multiple of num_generations (whole groups)."""
    max_completion_length: int = Field(512, ge=1, le=65536, title="max_completion_length")
    """Completion tokens per sample. 512 fits a program for the builtin problems and keeps steps short."""
    learning_rate: float = Field(1e-6, gt=0, le=1.0, title="learning_rate")
    """1e-6, TRL's GRPO default: RL on a pretrained policy moves it little per step."""
    beta: float = Field(0.0, ge=0, le=10.0, title="beta (KL)")
    """KL coefficient. 0 (TRL's default since DAPO): no reference model is held in memory."""
    loss_type: LossType = Field("dapo", title="loss_type")
    """dapo (TRL's default): token-level normalisation, no length bias."""
    temperature: float = Field(1.0, gt=0, le=2.0, title="Temperature")
    """Generation temperature; 1.0 samples the policy being trained."""
    save_steps: int = Field(50, ge=1, le=1_000_000, title="save_steps")
    """A checkpoint every N steps: each becomes a checkpoint row, and a killed job resumes from the last."""
    seed: int = Field(0, ge=0, le=2**31 - 1, title="Seed")
    """Training seed (data order, sampling)."""
    keep_checkpoints: int = Field(2, ge=0, le=10_000, title="Checkpoints kept")
    """How many checkpoint-N folders stay (TRL's save_total_limit; 0: all): an older one is deleted
    once a newer one is whole. Only the newest keeps the optimizer state a resume needs."""
    save_dtype: Literal["float32", "base"] = Field("float32", title="Checkpoint dtype")
    """float32: checkpoints keep the optimizer's float32 master weights, so an RL update of 1e-5 per
    weight survives; base: the base checkpoint's dtype (half the bytes in bf16), and each save
    measures what share of the update the rounding kept (bf16's half-step is 6e-5 near 0.02)."""
    precision: Precision = Field("auto", title="Precision")
    """auto: bf16 mixed precision on GPUs (float32 master weights, bf16 compute), float32 on CPUs;
    bf16 or fp32 to choose."""
    gradient_checkpointing: Toggle = Field("auto", title="Gradient checkpointing")
    """auto: on for GPUs (activations recomputed in the backward pass: about a third more compute,
    a fraction of the memory), off on CPUs."""
    sharding: Sharding = Field("fsdp", title="Sharding (gpus > 1)")
    """fsdp: FSDP full shard, weights, gradients and optimizer states split over the training GPUs;
    ddp: a whole copy on each (16 bytes per parameter per GPU)."""
    lora_rank: int = Field(0, ge=0, le=1024, title="LoRA rank")
    """0: full fine-tuning; r > 0: LoRA adapters of rank r on every linear layer (peft), the base
    frozen in bf16 on GPUs; the final checkpoint is the base with the adapters merged, in float32."""
    use_vllm: bool = Field(False, title="vLLM generation (GPU)")
    """Generate with vLLM (see vllm_mode); off: plain transformers generation, which also works on a CPU."""
    vllm_mode: VllmMode = Field("colocate", title="vLLM mode")
    """colocate: every training process generates with vLLM on its own GPU; server: the first GPU runs
    `trl vllm-serve` and the other gpus - 1 train (needs use_vllm and gpus >= 2)."""
    gpus: float = Field(1.0, ge=0, le=64, title="GPUs")
    """GPUs the run uses (and the ray executor asks for): 0 trains on CPUs; up to 1 trains in the job's
    process; N > 1 (whole) launches N training processes with accelerate, or N - 1 beside a vLLM server."""
    report_to: ReportTo = Field("none", title="Report to (tracker)")
    """TRL's report_to: where the trainer logs its metrics besides the database (trackio, wandb, mlflow, … as
    transformers names them; all: every one installed). none, the default: the Training page alone. The tracker's
    own settings come from its environment variables (WANDB_PROJECT, MLFLOW_TRACKING_URI, …)."""
    repair_max_chars: int = Field(
        600, ge=50, le=100_000, title="Repair context (chars)", json_schema_extra={"form": False}
    )
    """Failure context kept in a repair prompt (repair:R_k): enough for a verdict and a diff."""

    # the problems trained on
    bench: str = Field("builtin", title="Benchmark")
    """Problem set: builtin, lcb, ccplus, or any bench imported into the database."""
    problems: list[str] = Field([], title="Problems", json_schema_extra={"cli": "--problem", "form": False})
    """Only these problem ids (BENCH/ID); repeatable. Empty: every problem of the bench."""
    limit: int | None = Field(None, ge=1, title="At most N problems", json_schema_extra={"none": "all"})
    """At most this many problems (in id order), for a quick run; none: all."""
    difficulty: Difficulty | None = Field(None, title="Difficulty", json_schema_extra={"none": "all"})
    """Only problems of this difficulty; none: all of them."""

    # the prompt, where it runs and how the rewards are judged
    prompt_format: PromptFormat = Field("auto", title="Prompt format")
    """chat: the tokenizer's chat template; plain: a text prompt (problem, instructions, answer cue)
    for base checkpoints without one; auto: chat when every checkpoint of the job has a template,
    else plain. The stored experiment records the format used."""
    executor: ExecutorName = Field("local", title="Executor")
    """local: the work runs in the job's own process (judging on every core); ray: on a Ray cluster
    (a sweep: one engine actor per GPU, merges and judging as CPU tasks; RL: a task asking for GPUs)."""
    ray_address: str | None = Field(None, title="Ray address", json_schema_extra={"form": False})
    """auto (join a running cluster) or HOST:PORT; none starts a local Ray on 127.0.0.1 only."""
    gpu_busy: Literal["refuse", "wait"] = Field("refuse", title="When this node's GPUs are taken")
    """local: a job takes GPUs of its own (a lease that ends with its process); when too few are free,
    refuse in one line naming their holders, or wait until enough are."""
    backend: SandboxBackend = Field("bwrap", title="Sandbox")
    """Sandbox the programs (and tool calls) run in: bwrap (default, no daemon), docker, or none (no
    isolation: trusted code only)."""

    @model_validator(mode="before")
    @classmethod
    def _stored_names(cls, data):
        """Specs stored under older field names keep their values: `num_gpus` is read as `gpus`, and the
        `save_float32` switch as `save_dtype` (on: float32; off: the base's dtype)."""
        if isinstance(data, dict) and "num_gpus" in data and "gpus" not in data:
            data = {k: v for k, v in data.items() if k != "num_gpus"} | {"gpus": data["num_gpus"]}
        if isinstance(data, dict) and "save_float32" in data and "save_dtype" not in data:
            dtype = "float32" if data["save_float32"] else "base"
            data = {k: v for k, v in data.items() if k != "save_float32"} | {"save_dtype": dtype}
        return data

    @property
    def launched(self) -> bool:
        """Trained by processes that accelerate launches (more than one GPU), not in the job's process."""
        return self.gpus > 1

    @property
    def training_processes(self) -> int:
        if not self.launched:
            return 1
        return int(self.gpus) - (self.use_vllm and self.vllm_mode == "server")

    @property
    def lora(self) -> bool:
        return self.lora_rank > 0

    def on_gpu(self, cuda: bool) -> dict[str, bool]:
        """The precision and checkpointing a run gets: `auto` is bf16 + checkpointing on GPUs, fp32 on CPUs."""
        gpu = cuda and self.gpus > 0
        bf16 = self.precision == "bf16" or (self.precision == "auto" and gpu)
        ckpt = self.gradient_checkpointing == "on" or (self.gradient_checkpointing == "auto" and gpu)
        return {"bf16": bf16, "gradient_checkpointing": ckpt}

    @model_validator(mode="after")
    def _check(self):
        _, repair = parse_reward(self.reward)
        if self.launched and not float(self.gpus).is_integer():
            raise FieldError(f"gpus: {self.gpus:g} is not a whole number; above 1, each GPU is one process", "gpus")
        if self.use_vllm and self.gpus == 0:
            raise FieldError(
                "use_vllm generates on a GPU: gpus 0 trains on CPUs; set gpus >= 1 or leave out use_vllm", "use_vllm"
            )
        if self.use_vllm and self.vllm_mode == "server" and self.gpus < 2:
            raise FieldError("vllm_mode server needs gpus >= 2: one GPU serves vLLM, the others train", "vllm_mode")
        if self.vllm_mode == "server" and not self.use_vllm:
            raise FieldError(
                "vllm_mode server generates with vLLM: add use_vllm, or leave vllm_mode at colocate", "vllm_mode"
            )
        package = TRACKERS.get(self.report_to)
        if package and self.executor == "local" and importlib.util.find_spec(package) is None:
            raise FieldError(
                f"report_to {self.report_to} needs the {package} package here (pip install {package}); "
                "or leave report_to at none",
                "report_to",
            )
        if repair and self.training_processes > 1:  # each process would fill its own repair pool
            raise FieldError(
                f"{self.reward} trains in one process: its repair prompts are not shared across GPUs", "reward"
            )
        # GRPOConfig's rule: the global batch (per device x processes) holds whole groups
        batch = self.per_device_train_batch_size * self.training_processes
        if batch % self.num_generations:
            raise FieldError(
                f"per_device_train_batch_size x {self.training_processes} training process(es) = {batch} completions "
                f"per step, not a multiple of num_generations ({self.num_generations}): GRPO needs whole groups",
                "per_device_train_batch_size",
            )
        return self
