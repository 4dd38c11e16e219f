"""RL runs: TRL's GRPOTrainer with our sandbox rewards. No RL loop of our own.

The run is an experiment; saved checkpoints become `checkpoints` rows (reward, step, experiment)
and per-step metrics go to the `metrics` table.
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path

from backend.checkpoints import ensure_registered
from backend.errors import UserError
from backend.records import Checkpoint, Experiment, Metric, Test
from backend.rl.rewards import SandboxReward, parse_reward
from backend.rollout.prompts import conversation
from backend.rollout.run import RolloutSpec, public_example, select_problems
from backend.sandbox.judge import JudgeTest
from backend.store import Store


@dataclass
class RLSpec:
    """GRPO hyperparameters keep TRL's names (GRPOConfig); the rest says what to train on."""

    base: str
    output_dir: str
    reward: str = "R_inf"  # R_1…R_6, R_inf, partial_discrete, partial_continuous
    bench: str = "builtin"
    difficulty: str | None = None
    problems: list[str] = field(default_factory=list)
    limit: int | None = None
    steps: int = 100  # GRPOConfig.max_steps
    num_generations: int = 8
    per_device_train_batch_size: int = 8
    max_completion_length: int = 512
    learning_rate: float = 1e-6
    beta: float = 0.0
    loss_type: str = "dapo"
    temperature: float = 1.0
    save_steps: int = 50
    seed: int = 0
    use_vllm: bool = False  # colocated vLLM generation on a GPU; plain generation on CPU
    backend: str = "bwrap"

    def __post_init__(self):
        _, repair = parse_reward(self.reward)
        if repair:
            raise UserError("online repair (repair:R_k) is not implemented yet; train with a plain or shaped reward")
        if self.per_device_train_batch_size % self.num_generations:
            raise UserError("per_device_train_batch_size must be a multiple of num_generations (GRPO groups)")


def run_rl(store: Store, spec: RLSpec, progress: bool = True) -> str:
    """Train; returns the experiment id. Checkpoints and metrics land in the store as it goes."""
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    problems = select_problems(store, RolloutSpec(checkpoint=spec.base, bench=spec.bench, difficulty=spec.difficulty,
                                                  problems=spec.problems, limit=spec.limit))  # fmt: skip
    base = ensure_registered(store, spec.base)
    exp = f"rl-{dt.datetime.now():%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"
    store.put([Experiment(id=exp, kind="rl", name=f"GRPO on {base.label} with {spec.reward}", spec=asdict(spec),
                          note=f"RL run: reward {spec.reward}, {len(problems)} problems of {spec.bench}")])  # fmt: skip
    judged = {
        p.id: (p, [JudgeTest(t.input, t.output) for t in store.select(Test, {"problem_id": p.id})]) for p in problems
    }
    reward = SandboxReward(judged, spec.reward, spec.backend)
    rows = [{"prompt": conversation(p, "reasoning", public_example(store, p)), "problem_id": p.id} for p in problems]
    config = GRPOConfig(
        output_dir=spec.output_dir, max_steps=spec.steps, num_generations=spec.num_generations,
        per_device_train_batch_size=spec.per_device_train_batch_size, max_completion_length=spec.max_completion_length,
        learning_rate=spec.learning_rate, beta=spec.beta, loss_type=spec.loss_type, temperature=spec.temperature,
        save_steps=spec.save_steps, seed=spec.seed, logging_steps=1, report_to="none", use_vllm=spec.use_vllm,
        use_cpu=not _cuda(), bf16=False, gradient_checkpointing=False, disable_tqdm=not progress,
    )  # fmt: skip

    class ToStore(TrainerCallback):
        def on_log(self, args, state, control, logs=None, **kw):
            values = {k: float(v) for k, v in (logs or {}).items() if isinstance(v, int | float)}
            if reward.history:
                values |= reward.history[-1].summary()
            store.put([Metric(exp, state.global_step, k, v) for k, v in values.items()])

        def on_save(self, args, state, control, **kw):
            _register(store, Path(args.output_dir) / f"checkpoint-{state.global_step}", spec, exp, state.global_step)

    trainer = GRPOTrainer(
        model=spec.base,
        reward_funcs=[reward],
        args=config,
        train_dataset=Dataset.from_list(rows),
        callbacks=[ToStore()],
    )
    trainer.train()
    final = Path(spec.output_dir) / "final"
    trainer.save_model(str(final))
    trainer.processing_class.save_pretrained(str(final))
    _register(store, final, spec, exp, trainer.state.global_step)
    store.update(Experiment, (exp,), status="done")
    return exp


def _register(store: Store, folder: Path, spec: RLSpec, exp: str, step: int) -> None:
    if not (folder / "config.json").exists():
        return
    row = ensure_registered(store, folder, kind="trained", label=f"{spec.reward} step {step}")
    store.update(Checkpoint, (row.id,), reward=spec.reward, step=step, experiment_id=exp, setting="reasoning")


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()
