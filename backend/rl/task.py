"""An RL run's task and its checkpoints on disk: what the job's process reads from the store for
the training processes (the only DuckDB writer is the job's process), TRL's vLLM options, and how
each saved checkpoint-N becomes a registered checkpoint row.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from backend.errors import UserError
from backend.grading.judge import JudgeTest
from backend.records import Checkpoint, Experiment, Metric, Test
from backend.rl.spec import KEPT_WARN, RLSpec
from backend.rollout.prompts import conversation, render, resolve_prompt_format

if TYPE_CHECKING:  # the store (DuckDB) is the job process's; training alone runs without it (bench/gpu_check_rl.py)
    from backend.store import Store

SURVIVAL = "update_survival.json"  # in a checkpoint folder saved in bf16: what the rounding kept


def vllm_options(spec: RLSpec, server_url: str | None = None, group_port: int | None = None) -> dict:
    """TRL's vLLM options, explicit: TRL's `vllm_mode` default changed between versions, and without
    vLLM TRL would fail deep inside with an ImportError. Server mode talks to `server_url` and syncs
    weights over `group_port` (TRL's fixed default 51216 would collide between two jobs on a node)."""
    if not spec.use_vllm:
        return {"use_vllm": False}
    import importlib.util

    if importlib.util.find_spec("vllm") is None or not cuda_available():
        raise UserError(
            "--use-vllm needs vLLM on a CUDA machine: build it with `make gpu-env`, or leave out --use-vllm"
        )
    if spec.vllm_mode == "server":
        ports = {"vllm_group_port": group_port} if group_port else {}
        return {"use_vllm": True, "vllm_mode": "server", "vllm_server_base_url": server_url, **ports}
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
    from backend.merge.checkpoints import ensure_registered
    from backend.rollout.run import public_example, select_problems

    problems = select_problems(store, spec)
    prompt_format = resolve_prompt_format(spec.prompt_format, [spec.base])
    base = ensure_registered(store, spec.base)
    exp = experiment_id or f"rl-{dt.datetime.now():%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"
    if store.get(Experiment, exp) is None:
        stored = spec.model_dump() | {"prompt_format": prompt_format}
        store.put(
            [
                Experiment(
                    id=exp,
                    kind="rl",
                    name=f"GRPO on {base.label} with {spec.reward}",
                    spec=stored,
                    note=f"RL run: reward {spec.reward}, {len(problems)} problems of {spec.bench}",
                )
            ]
        )
    store.update(Experiment, (exp,), status="running")
    judged = {
        p.id: (p, [JudgeTest(t.input, t.output) for t in store.select(Test, {"problem_id": p.id})]) for p in problems
    }
    # the rollout's prompt path: messages for TRL's conversational format, a string for its standard one
    rows = [
        {
            "prompt": render(conversation(p, "reasoning", public_example(store, p)), "reasoning", prompt_format),
            "problem_id": p.id,
            "repair": False,
        }
        for p in problems
    ]
    return exp, Task(spec, prompt_format, judged, rows)


def register_checkpoint(store: Store, folder: Path, spec: RLSpec, exp: str, step: int) -> None:
    """A saved folder as a trained checkpoint row, in float32 or, when asked, the base's dtype; a
    bf16 save's update survival becomes two metrics at its step (the Training page shows them)."""
    kept = to_saved_dtype(folder, spec)
    if kept:
        store.put([Metric(exp, step, f"saved_{k}", v) for k, v in kept.items()])
    _register(store, folder, spec, exp, step)


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


def to_saved_dtype(folder: Path, spec: RLSpec) -> dict[str, float] | None:
    """TRL trains and saves float32 master weights; kept unless save_dtype is "base", then rewritten
    in the base's float dtype. Rounding decides what an RL update of ~1e-5 per weight leaves, so a
    cast measures it first (against the base) and writes it beside the weights; below KEPT_WARN it
    says so in one line. Returns the measure, or None when nothing was cast."""
    from backend.merge.diff import update_survival
    from backend.merge.io import CheckpointFolder

    if spec.save_dtype == "float32" or not (folder / "config.json").is_file():
        return None
    if (folder / SURVIVAL).is_file():  # measured when it was cast (a resume registers it again)
        return json.loads((folder / SURVIVAL).read_text())
    base = CheckpointFolder(spec.base)
    try:
        dtypes = {t.dtype for t in base.tensors.values() if t.is_float}
    finally:
        base.close()
    if len(dtypes) != 1 or (dtype := dtypes.pop()) == "F32":
        return None
    kept = update_survival(spec.base, folder, dtype)
    cast_checkpoint(folder, dtype)
    (folder / SURVIVAL).write_text(json.dumps(kept))
    if kept["update_kept_share"] < KEPT_WARN:
        print(
            f"{folder.name}: saved in {dtype}, only {kept['update_kept_share']:.1%} of the weights the run moved "
            f"kept their update (norm ratio {kept['update_norm_ratio']:.2f}); --save-dtype float32 keeps all of it",
            flush=True,
        )
    return kept


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
    from backend.merge.checkpoints import ensure_registered

    if not (folder / "config.json").exists():
        return
    row = ensure_registered(store, folder, kind="trained", label=f"{spec.reward} step {step}")
    store.update(Checkpoint, (row.id,), reward=spec.reward, step=step, experiment_id=exp, setting="reasoning")


def cuda_available() -> bool:
    """Whether this node has CUDA GPUs, asked as torch's device count (NVML first) so that the
    question does not initialise CUDA before the job's lease has set CUDA_VISIBLE_DEVICES."""
    import torch

    return torch.cuda.device_count() > 0
