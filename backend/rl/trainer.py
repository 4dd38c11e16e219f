"""RL runs: TRL's GRPOTrainer with our sandbox rewards. No RL loop of our own.

The run is an experiment; saved checkpoints become `checkpoints` rows (reward, step, experiment)
and per-step metrics go to the `metrics` table.
"""

from __future__ import annotations

from pathlib import Path

from backend.records import Experiment, Metric
from backend.rl.rewards import RepairPool, SandboxReward
from backend.rl.spec import RLSpec
from backend.rl.task import (
    Task,
    complete_checkpoints,
    cuda_available,
    last_complete_checkpoint,
    prepare,
    register_checkpoint,
    vllm_options,
)
from backend.store import Store


def run_rl(store: Store, spec: RLSpec, progress: bool = True, experiment_id: str | None = None, job=None) -> str:
    """Train; returns the experiment id. Checkpoints and metrics land in the store as it goes.
    Resumes from the newest checkpoint-N in output_dir when there is one (a resumed job). More than
    one GPU: accelerate launches the training processes and this process drives them (launch.py)."""
    from transformers import TrainerCallback

    exp, task = prepare(store, spec, experiment_id)
    if spec.launched:
        from backend.rl.launch import run_launched

        run_launched(store, task, exp, job)
        store.update(Experiment, (exp,), status="done")
        return exp
    reward = SandboxReward(task.judged, spec.reward, spec.backend)

    class ToStore(TrainerCallback):
        def on_train_begin(self, args, state, control, **kw):
            if job:
                job.set_total("train", spec.steps)
                if state.global_step:  # resumed from a checkpoint: those steps are not this run's speed
                    job.reuse("train", state.global_step)

        def on_log(self, args, state, control, logs=None, **kw):
            store.put([Metric(exp, state.global_step, k, v) for k, v in step_values(logs, reward).items()])

        def on_step_end(self, args, state, control, **kw):
            if job:  # the step count, not a tally: a resumed run starts at its checkpoint's step
                job.reached("train", state.global_step)

        def on_save(self, args, state, control, **kw):
            register_checkpoint(
                store, Path(args.output_dir) / f"checkpoint-{state.global_step}", spec, exp, state.global_step
            )

    trainer = grpo_trainer(
        task,
        reward,
        vllm_options(spec),
        use_cpu=spec.gpus == 0 or not cuda_available(),
        progress=progress,
        callbacks=[ToStore()],
    )
    for step, folder in complete_checkpoints(Path(spec.output_dir)):  # a kill may have come before on_save
        register_checkpoint(store, folder, spec, exp, step)
    step = train(trainer, Path(spec.output_dir))
    register_checkpoint(store, Path(spec.output_dir) / "final", spec, exp, step)
    store.update(Experiment, (exp,), status="done")
    return exp


def grpo_trainer(task: Task, reward: SandboxReward, vllm: dict, use_cpu: bool, progress: bool, callbacks: list):
    """TRL's GRPOTrainer for the task, the same in the job's process and in launched processes."""
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    spec = task.spec
    if reward.repair:  # as many repair slots as problems: once failures arrive, about half the prompts are repairs
        reward.pool = RepairPool(len(task.rows), spec.repair_max_chars, task.prompt_format)
        dataset = with_repairs(task.rows, reward.pool)
    else:
        dataset = Dataset.from_list(task.rows)
    config = GRPOConfig(
        **vllm,
        output_dir=spec.output_dir, max_steps=spec.steps, num_generations=spec.num_generations,
        per_device_train_batch_size=spec.per_device_train_batch_size, max_completion_length=spec.max_completion_length,
        learning_rate=spec.learning_rate, beta=spec.beta, loss_type=spec.loss_type, temperature=spec.temperature,
        save_steps=spec.save_steps, seed=spec.seed, logging_steps=1, report_to="none",
        use_cpu=use_cpu, bf16=False, gradient_checkpointing=False, disable_tqdm=not progress,
    )  # fmt: skip
    return GRPOTrainer(model=spec.base, reward_funcs=[reward], args=config, train_dataset=dataset, callbacks=callbacks)


def train(trainer, output_dir: Path) -> int:
    """Train from the last complete checkpoint (if any) and save output_dir/final; returns the last step."""
    trainer.train(resume_from_checkpoint=last_complete_checkpoint(output_dir))
    final = output_dir / "final"
    trainer.save_model(str(final))
    if trainer.is_world_process_zero():
        trainer.processing_class.save_pretrained(str(final))
    return trainer.state.global_step


def step_values(logs: dict | None, reward: SandboxReward) -> dict[str, float]:
    """One logged step's metrics: TRL's numbers and the reward's outcome summary of the last batch."""
    values = {k: float(v) for k, v in (logs or {}).items() if isinstance(v, int | float)}
    if reward.history:
        values |= reward.history[-1].summary()
    return values


def with_repairs(rows: list[dict], pool: RepairPool):
    """The GRPO dataset with online repair: the original prompts, then one row per repair slot
    (an empty slot stands in for an original prompt). TRL takes only `datasets` datasets, so this
    is one whose item access reads the pool. Slots change only inside the reward call, after the
    batch was read, so the num_generations copies of one index always see the same prompt."""
    from datasets import Dataset

    class WithRepairs(Dataset):
        def __getitem__(self, key):
            return self._item(key) if isinstance(key, int) else super().__getitem__(key)

        def __getitems__(self, keys: list) -> list:
            return [self._item(int(k)) for k in keys]

        def _item(self, i: int) -> dict:
            slot = pool.slots[i - len(rows)] if i >= len(rows) else None
            return slot or super().__getitem__(i)

    base = Dataset.from_list(rows + [rows[i % len(rows)] for i in range(len(pool.slots))])
    return WithRepairs(base.data, info=base.info, split=base.split)
