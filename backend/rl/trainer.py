"""RL runs: TRL's GRPOTrainer with our sandbox rewards. No RL loop of our own.

The run is an experiment; saved checkpoints become `checkpoints` rows (reward, step, experiment)
and per-step metrics go to the `metrics` table.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import uuid
from pathlib import Path

from backend.errors import UserError
from backend.grading.judge import JudgeTest
from backend.merge.registry import ensure_registered
from backend.records import Checkpoint, Experiment, Metric, Test
from backend.rl.rewards import RepairPool, SandboxReward
from backend.rl.spec import RLSpec
from backend.rollout.prompts import conversation, render, resolve_prompt_format
from backend.rollout.run import public_example, select_problems
from backend.store import Store


def vllm_options(spec: RLSpec, server_url: str | None = None) -> dict:
    """TRL's vLLM options, explicit: TRL's `vllm_mode` default changed between versions, and without
    vLLM TRL would fail deep inside with an ImportError. Server mode talks to `server_url`."""
    if not spec.use_vllm:
        return {"use_vllm": False}
    import importlib.util

    if importlib.util.find_spec("vllm") is None or not _cuda():
        raise UserError(
            "--use-vllm needs vLLM on a CUDA machine: build it with `make gpu-env`, or leave out --use-vllm"
        )
    if spec.vllm_mode == "server":
        return {"use_vllm": True, "vllm_mode": "server", "vllm_server_base_url": server_url}
    return {"use_vllm": True, "vllm_mode": "colocate"}  # generation inside each training process, on its GPU


@dataclasses.dataclass
class Task:
    """What a training process needs, read from the store by the job's process: launched training
    processes get it as a file and never open the store (DuckDB has one writing process)."""

    spec: RLSpec
    prompt_format: str
    judged: dict  # problem id -> (Problem, [JudgeTest])
    rows: list[dict]  # the dataset: prompt, problem_id, repair


def prepare(store: Store, spec: RLSpec, experiment_id: str | None = None) -> tuple[str, Task]:
    """The run's experiment row (created on first start) and its training task."""
    problems = select_problems(store, spec)
    prompt_format = resolve_prompt_format(spec.prompt_format, [spec.base])
    base = ensure_registered(store, spec.base)
    exp = experiment_id or f"rl-{dt.datetime.now():%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"
    if store.get(Experiment, exp) is None:
        stored = spec.model_dump() | {"prompt_format": prompt_format}
        store.put([Experiment(id=exp, kind="rl", name=f"GRPO on {base.label} with {spec.reward}", spec=stored,
                              note=f"RL run: reward {spec.reward}, {len(problems)} problems of {spec.bench}")])  # fmt: skip
    store.update(Experiment, (exp,), status="running")
    judged = {
        p.id: (p, [JudgeTest(t.input, t.output) for t in store.select(Test, {"problem_id": p.id})]) for p in problems
    }
    # the rollout's prompt path: messages for TRL's conversational format, a string for its standard one
    rows = [{"prompt": render(conversation(p, "reasoning", public_example(store, p)), "reasoning", prompt_format),
             "problem_id": p.id, "repair": False} for p in problems]  # fmt: skip
    return exp, Task(spec, prompt_format, judged, rows)


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
        use_cpu=spec.gpus == 0 or not _cuda(),
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


def register_checkpoint(store: Store, folder: Path, spec: RLSpec, exp: str, step: int) -> None:
    """A saved folder in the base's dtype (unless float32 was asked for), as a trained checkpoint row."""
    _to_saved_dtype(folder, spec)
    _register(store, folder, spec, exp, step)


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


def complete_checkpoints(output_dir: Path) -> list[tuple[int, Path]]:
    """(step, folder) of every checkpoint-N that was fully written, oldest first. Trainer writes
    trainer_state.json last, and not atomically: a run killed mid-save leaves a newer folder
    without it (or with a torn one)."""
    complete = []
    for folder in output_dir.glob("checkpoint-*"):
        try:
            json.loads((folder / "trainer_state.json").read_text())
            complete.append((int(folder.name.split("-", 1)[1]), folder))
        except (OSError, ValueError):
            continue
    return sorted(complete)


def last_complete_checkpoint(output_dir: Path) -> str | None:
    complete = complete_checkpoints(output_dir)
    return str(complete[-1][1]) if complete else None


def _to_saved_dtype(folder: Path, spec: RLSpec) -> None:
    """TRL trains and saves in float32 whatever the base's dtype (GRPOTrainer loads with dtype
    float32 unless told otherwise); rewrite the folder's weights in the base's float dtype unless
    float32 was asked for. A resumed run reloads these weights into its float32 model."""
    from backend.merge.io import CheckpointFolder

    if spec.save_float32 or not (folder / "config.json").is_file():
        return
    base = CheckpointFolder(spec.base)
    try:
        dtypes = {t.dtype for t in base.tensors.values() if t.is_float}
    finally:
        base.close()
    if len(dtypes) == 1 and (dtype := dtypes.pop()) != "F32":
        cast_checkpoint(folder, dtype)


def cast_checkpoint(folder: Path, dtype: str) -> None:
    """Every float tensor of the folder's safetensors files in `dtype` (a safetensors name), each
    file replaced atomically, and config.json's dtype to match."""
    import os

    from safetensors import safe_open
    from safetensors.torch import save_file

    from backend.merge.io import ST_DTYPES

    target = ST_DTYPES[dtype]
    for file in sorted(folder.glob("*.safetensors")):
        with safe_open(str(file), "pt") as f:
            metadata = f.metadata()
            tensors = {k: f.get_tensor(k) for k in f.keys()}  # noqa: SIM118 (safe_open has no __iter__)
        if all(t.dtype == target or not t.is_floating_point() for t in tensors.values()):
            continue
        cast = {k: t.to(target) if t.is_floating_point() else t for k, t in tensors.items()}
        tmp = file.with_name(file.name + ".tmp")
        save_file(cast, str(tmp), metadata=metadata)
        os.replace(tmp, file)
    config = folder / "config.json"
    data = json.loads(config.read_text())
    name = {"BF16": "bfloat16", "F16": "float16", "F64": "float64"}[dtype]
    for key in ("torch_dtype", "dtype"):
        if key in data:
            data[key] = name
    config.write_text(json.dumps(data, indent=2))


def _register(store: Store, folder: Path, spec: RLSpec, exp: str, step: int) -> None:
    if not (folder / "config.json").exists():
        return
    row = ensure_registered(store, folder, kind="trained", label=f"{spec.reward} step {step}")
    store.update(Checkpoint, (row.id,), reward=spec.reward, step=step, experiment_id=exp, setting="reasoning")


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()
