"""RL runs: TRL's GRPOTrainer with our sandbox rewards. No RL loop of our own.

The run is an experiment; saved checkpoints become `checkpoints` rows (reward, step, experiment)
and per-step metrics go to the `metrics` table.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from backend.errors import UserError
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

if TYPE_CHECKING:  # the job process's store (DuckDB); training alone runs without it (bench/gpu_check_rl.py)
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

    use_cpu = spec.gpus == 0 or not cuda_available()
    if not use_cpu:  # after the job's GPU lease: the first visible GPU is this run's
        from backend.rl.memory import plan_here

        plan_here(spec)
    trainer = grpo_trainer(
        task, [reward], vllm_options(spec), use_cpu=use_cpu, progress=progress, callbacks=[ToStore()]
    )
    for step, folder in complete_checkpoints(Path(spec.output_dir)):  # a kill may have come before on_save
        register_checkpoint(store, folder, spec, exp, step)
    try:
        step = train(trainer, spec)
    finally:
        reward.close()  # this rank's judging pool, started at the first step
    register_checkpoint(store, Path(spec.output_dir) / "final", spec, exp, step)
    store.update(Experiment, (exp,), status="done")
    return exp


def grpo_trainer(task: Task, reward_funcs: list, vllm: dict, use_cpu: bool, progress: bool, callbacks: list):
    """TRL's GRPOTrainer for the task, the same in the job's process and in launched processes.
    Rewards are the sandbox judge's (a list of TRL reward functions: bench/gpu_check_rl.py passes its own)."""
    from trl import GRPOTrainer

    from backend.rl import checkpoints

    spec = task.spec
    reward = reward_funcs[0]
    if getattr(reward, "repair", False):  # a slot per problem: once failures arrive, about half are repairs
        reward.pool = RepairPool(len(task.rows), spec.repair_max_chars, task.prompt_format)
        dataset = with_repairs(task.rows, reward.pool)
    else:
        from datasets import Dataset

        dataset = Dataset.from_list(task.rows)
    flags = spec.on_gpu(not use_cpu)
    if spec.launched and spec.sharding == "fsdp":  # FSDP checkpoints activations itself (launch.py's config)
        flags["gradient_checkpointing"] = False
    # a full fine-tune trains float32 master weights (bf16 compute under mixed precision); a LoRA base is frozen in bf16
    dtype = "bfloat16" if spec.lora and not use_cpu else "float32"
    config = grpo_config(spec, vllm, flags, use_cpu=use_cpu, progress=progress, dtype=dtype)
    trainer_class = checkpoints.without_second_copy(GRPOTrainer)
    return trainer_class(
        model=spec.base,
        reward_funcs=reward_funcs,
        args=config,
        train_dataset=dataset,
        callbacks=[*callbacks, *checkpoints.callbacks(spec)],
        peft_config=lora_config(spec),
    )


def grpo_config(spec: RLSpec, vllm: dict, flags: dict, use_cpu: bool, progress: bool, dtype: str):
    """TRL's GRPOConfig for the spec: TRL's own names, the spec's values (report_to included: the
    user's tracker, none by default)."""
    from trl import GRPOConfig

    return GRPOConfig(
        **vllm,
        **flags,
        output_dir=spec.output_dir,
        max_steps=spec.steps,
        num_generations=spec.num_generations,
        per_device_train_batch_size=spec.per_device_train_batch_size,
        max_completion_length=spec.max_completion_length,
        learning_rate=spec.learning_rate,
        beta=spec.beta,
        loss_type=spec.loss_type,
        temperature=spec.temperature,
        save_steps=spec.save_steps,
        save_total_limit=spec.keep_checkpoints or None,
        seed=spec.seed,
        logging_steps=1,
        report_to=spec.report_to,
        use_cpu=use_cpu,
        disable_tqdm=not progress,
        model_init_kwargs={"dtype": dtype},
    )


def lora_config(spec: RLSpec):
    if not spec.lora:
        return None
    from peft import LoraConfig

    return LoraConfig(
        r=spec.lora_rank, lora_alpha=2 * spec.lora_rank, target_modules="all-linear", task_type="CAUSAL_LM"
    )


def train(trainer, spec: RLSpec) -> int:
    """Train from the last complete checkpoint (if any) and save output_dir/final; returns the last step.
    A LoRA run's final is its base with the adapters merged, in float32 (a bf16 merge would round the update away)."""
    from backend.rl.checkpoints import stopped_for_space

    output_dir = Path(spec.output_dir)
    trainer.train(resume_from_checkpoint=last_complete_checkpoint(output_dir))
    if line := stopped_for_space(trainer):
        raise UserError(line)
    final = output_dir / "final"
    if spec.lora:
        merge_lora(trainer, spec.base, final)
    else:
        trainer.save_model(str(final))
    if trainer.is_world_process_zero():
        trainer.processing_class.save_pretrained(str(final))
    return trainer.state.global_step


def merge_lora(trainer, base: str, final: Path) -> None:
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    adapter = final.with_name("final-adapter")
    trainer.save_model(str(adapter))
    trainer.accelerator.wait_for_everyone()
    if trainer.is_world_process_zero():
        model = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32)
        PeftModel.from_pretrained(model, str(adapter)).merge_and_unload().save_pretrained(str(final))


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
