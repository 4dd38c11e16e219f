"""RL runs: TRL's GRPOTrainer with our sandbox rewards. No RL loop of our own.

The run is an experiment; saved checkpoints become `checkpoints` rows (reward, step, experiment)
and per-step metrics go to the `metrics` table.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from pathlib import Path

from backend.errors import UserError
from backend.grading.judge import JudgeTest
from backend.merge.checkpoints import ensure_registered
from backend.records import Checkpoint, Experiment, Metric, Test
from backend.rl.rewards import RepairPool, SandboxReward
from backend.rl.spec import RLSpec
from backend.rollout.prompts import conversation, render, resolve_prompt_format
from backend.rollout.run import public_example, select_problems
from backend.store import Store


def vllm_options(use_vllm: bool) -> dict:
    """TRL's vLLM options, explicit: TRL's `vllm_mode` default changed between versions, and without
    vLLM TRL would fail deep inside with an ImportError."""
    if not use_vllm:
        return {"use_vllm": False}
    import importlib.util

    if importlib.util.find_spec("vllm") is None or not _cuda():
        raise UserError(
            "--use-vllm needs vLLM on a CUDA machine: build it with `make gpu-env`, or leave out --use-vllm"
        )
    return {"use_vllm": True, "vllm_mode": "colocate"}  # generation inside the training process, on its GPU


def run_rl(store: Store, spec: RLSpec, progress: bool = True, experiment_id: str | None = None, job=None) -> str:
    """Train; returns the experiment id. Checkpoints and metrics land in the store as it goes.
    Resumes from the newest checkpoint-N in output_dir when there is one (a resumed job)."""
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

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
    reward = SandboxReward(judged, spec.reward, spec.backend)
    # the rollout's prompt path: messages for TRL's conversational format, a string for its standard one
    rows = [{"prompt": render(conversation(p, "reasoning", public_example(store, p)), "reasoning", prompt_format),
             "problem_id": p.id, "repair": False} for p in problems]  # fmt: skip
    if reward.repair:  # as many repair slots as problems: once failures arrive, about half the prompts are repairs
        reward.pool = RepairPool(len(rows), spec.repair_max_chars, prompt_format)
        dataset = with_repairs(rows, reward.pool)
    else:
        dataset = Dataset.from_list(rows)
    config = GRPOConfig(
        **vllm_options(spec.use_vllm),
        output_dir=spec.output_dir, max_steps=spec.steps, num_generations=spec.num_generations,
        per_device_train_batch_size=spec.per_device_train_batch_size, max_completion_length=spec.max_completion_length,
        learning_rate=spec.learning_rate, beta=spec.beta, loss_type=spec.loss_type, temperature=spec.temperature,
        save_steps=spec.save_steps, seed=spec.seed, logging_steps=1, report_to="none",
        use_cpu=not _cuda(), bf16=False, gradient_checkpointing=False, disable_tqdm=not progress,
    )  # fmt: skip

    class ToStore(TrainerCallback):
        def on_train_begin(self, args, state, control, **kw):
            if job:
                job.set_total("train", spec.steps)
                if state.global_step:  # resumed from a checkpoint: those steps are not this run's speed
                    job.reuse("train", state.global_step)

        def on_log(self, args, state, control, logs=None, **kw):
            values = {k: float(v) for k, v in (logs or {}).items() if isinstance(v, int | float)}
            if reward.history:
                values |= reward.history[-1].summary()
            store.put([Metric(exp, state.global_step, k, v) for k, v in values.items()])

        def on_step_end(self, args, state, control, **kw):
            if job:  # the step count, not a tally: a resumed run starts at its checkpoint's step
                job.reached("train", state.global_step)

        def on_save(self, args, state, control, **kw):
            folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
            _to_saved_dtype(folder, spec)
            _register(store, folder, spec, exp, state.global_step)

    trainer = GRPOTrainer(
        model=spec.base,
        reward_funcs=[reward],
        args=config,
        train_dataset=dataset,
        callbacks=[ToStore()],
    )
    for step, folder in complete_checkpoints(Path(spec.output_dir)):  # a kill may have come before on_save
        _to_saved_dtype(folder, spec)
        _register(store, folder, spec, exp, step)
    trainer.train(resume_from_checkpoint=last_complete_checkpoint(Path(spec.output_dir)))
    final = Path(spec.output_dir) / "final"
    trainer.save_model(str(final))
    trainer.processing_class.save_pretrained(str(final))
    _to_saved_dtype(final, spec)
    _register(store, final, spec, exp, trainer.state.global_step)
    store.update(Experiment, (exp,), status="done")
    return exp


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
