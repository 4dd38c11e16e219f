"""The RL job's spec. GRPO hyperparameters keep TRL's names (GRPOConfig) and say why their defaults
differ from TRL's where they do; the rest says what to train on and where. Importing this module
imports no torch: the dashboard validates the form with it."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field, model_validator

from backend.errors import UserError
from backend.grading.limits import SandboxChoice
from backend.rl.rewards import REWARDS, parse_reward
from backend.rollout.spec import ExecutorChoice, ProblemSelection, PromptChoice
from backend.specs import HIDDEN
from backend.vocab import LossType


class RLSpec(ProblemSelection, PromptChoice, ExecutorChoice, SandboxChoice):
    """`python -m backend rl` and the Launch page's RL form: TRL's GRPOTrainer as a resumable job,
    rewarded by the sandbox judge."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    kind: Literal["rl"] = Field("rl", json_schema_extra=HIDDEN)
    base: str = Field(min_length=1, title="Base / SFT checkpoint")
    """Base/SFT checkpoint folder the policy starts from (chat template or not: see prompt_format)."""
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
    """Completions per device step; a multiple of num_generations (whole groups)."""
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
    save_float32: bool = Field(False, title="Save float32 checkpoints")
    """TRL trains in float32; off: checkpoints are saved in the base checkpoint's dtype (a bf16 base
    gives bf16 checkpoints, half the bytes of a live α switch between two of them); on: float32."""
    use_vllm: bool = Field(False, title="Colocated vLLM generation (GPU)")
    """Generate with vLLM inside the training process on its GPU (vllm_mode="colocate"); off: plain
    transformers generation, which also works on a CPU."""
    num_gpus: float = Field(1.0, ge=0, le=8, title="GPUs (ray)")
    """GPUs the ray executor asks for; 0 trains on CPUs."""
    repair_max_chars: int = Field(600, ge=50, le=100_000, title="Repair context (chars)",
                                  json_schema_extra={"form": False})  # fmt: skip
    """Failure context kept in a repair prompt (repair:R_k): enough for a verdict and a diff."""

    @model_validator(mode="after")
    def _check(self):
        parse_reward(self.reward)
        if self.per_device_train_batch_size % self.num_generations:
            raise UserError("per_device_train_batch_size must be a multiple of num_generations (GRPO groups)")
        return self
