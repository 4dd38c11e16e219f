"""RL checkpoints that fit a disk: at most `keep_checkpoints` checkpoint-N folders (TRL's
`save_total_limit`, rotated by transformers once a newer one is whole), one full-weight file set
each, the optimizer state only in the newest (the one a resume reads), and a free-space check
before every save that stops the run in one line while the last whole checkpoint stays resumable.

A 7B FSDP run otherwise wrote, every save_steps, model.safetensors (float32, 30.5 GB), a second
full copy from FSDP's state dict (`pytorch_model_fsdp.bin`, accelerate's save_fsdp_model) and the
optimizer (61 GB), with no limit.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from backend.rl.task import complete_checkpoints

FSDP_WEIGHTS = "pytorch_model_fsdp.bin"  # accelerate's FULL_STATE_DICT copy (transformers FSDP_MODEL_NAME)
WEIGHTS = "model.safetensors"
# what only a resume reads: optimizer (one file, or FSDP's sharded folder), scheduler, scaler, RNG
RESUME_ONLY = ("optimizer.pt", "optimizer.bin", "optimizer_0", "scheduler.pt", "scaler.pt", "rng_state*.pth")
MARGIN = 1.1  # a save's size varies a little (trainer_state.json grows; safetensors headers)


def folder_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def needed_bytes(output_dir: Path, trainable: int, weights: int) -> int:
    """Bytes the next save writes: the newest whole checkpoint's size when there is one (it holds
    every file a save writes), else float32 weights plus Adam's two float32 moments per trained
    parameter. Rotation deletes the oldest only after the new one is whole, so all of it must fit."""
    whole = complete_checkpoints(output_dir)
    if whole:
        newest = whole[-1][1]
        return int(folder_bytes(newest) * MARGIN)
    return int((4 * weights + 8 * trainable) * MARGIN)


def short_of_space(output_dir: Path, trainable: int, weights: int) -> str | None:
    """One line when the next save would not fit on output_dir's filesystem, else None."""
    output_dir.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(output_dir).free
    need = needed_bytes(output_dir, trainable, weights)
    if free >= need:
        return None
    last = complete_checkpoints(output_dir)
    resumable = f"{last[-1][1].name} is whole and resumable" if last else "no checkpoint was saved yet"
    return (
        f"stopped before saving: the next checkpoint needs {need / 1e9:.2f} GB and {output_dir} has "
        f"{free / 1e9:.2f} GB free; {resumable}: free space (or lower --keep-checkpoints) and resume the job"
    )


def prune_resume_state(output_dir: Path) -> list[Path]:
    """Delete what only a resume reads from every whole checkpoint but the newest; returns what went."""
    whole = complete_checkpoints(output_dir)
    gone = []
    for _, folder in whole[:-1]:
        stamp = folder.stat()
        for pattern in RESUME_ONLY:
            for path in folder.glob(pattern):
                shutil.rmtree(path) if path.is_dir() else path.unlink()
                gone.append(path)
        # transformers rotates checkpoints oldest-mtime first (trainer.py:3425, use_mtime=True): a
        # deletion inside the folder must not make it look newer than the checkpoint after it
        os.utime(folder, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    return gone


def saved_parameters(spec) -> tuple[int, int]:
    """(trained, saved weight) parameter counts of a checkpoint-N, read from the base checkpoint:
    under FSDP a process's own parameters are only its shard. A LoRA checkpoint holds its adapters."""
    from backend.rl.memory import ModelShape, lora_params

    shape = ModelShape.of(spec.base)
    if spec.lora:
        adapters = lora_params(shape, spec.lora_rank)
        return adapters, adapters
    return shape.params, shape.params


def stopped_for_space(trainer) -> str | None:
    """The DiskGuard's line when it stopped the run, else None."""
    return next((cb.reason for cb in trainer.callback_handler.callbacks if getattr(cb, "reason", None)), None)


def callbacks(spec) -> list:
    """The trainer callbacks that keep a run's checkpoints within its disk."""
    from transformers import TrainerCallback

    output_dir = Path(spec.output_dir)

    class DiskGuard(TrainerCallback):
        """Before a save (DefaultFlowCallback has just asked for one): enough free space, or the run
        stops without saving and train() raises the line. Every rank asks the same filesystem; the
        answers are combined so that all ranks skip the save together (the save is collective)."""

        reason: str | None = None  # the line train() raises
        counts: tuple[int, int] | None = None

        def on_step_end(self, args, state, control, **kw):
            if not control.should_save:
                return
            self.counts = self.counts or saved_parameters(spec)  # once: the base's safetensors headers
            line = short_of_space(output_dir, *self.counts)
            if _any_rank(line is not None):
                self.reason = line or "another training process found its disk too full to save"
                control.should_save = False
                control.should_training_stop = True

        def on_save(self, args, state, control, **kw):
            if state.is_world_process_zero:
                prune_resume_state(output_dir)

    return [DiskGuard()]


def _any_rank(flag: bool) -> bool:
    """Whether any training process raised `flag` (this one alone when there is no process group)."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return flag
    import torch
    from accelerate import PartialState

    value = torch.tensor([int(flag)], device=PartialState().device)
    dist.all_reduce(value, op=dist.ReduceOp.MAX)
    return bool(value.item())


def without_second_copy(trainer_class):
    """`trainer_class` whose FSDP checkpoints hold the weights once: model.safetensors (the full
    state dict save_model writes) and no `pytorch_model_fsdp.bin`; a resume loads the weights back
    from model.safetensors. Other runs are unchanged."""
    import torch

    class OneWeightSet(trainer_class):
        def _save_optimizer_and_scheduler(self, output_dir: str) -> None:
            if not self.is_fsdp_enabled:
                return super()._save_optimizer_and_scheduler(output_dir)
            from accelerate.utils import save_fsdp_optimizer

            save_fsdp_optimizer(
                self.accelerator.state.fsdp_plugin, self.accelerator, self.optimizer, self.model, output_dir
            )
            if self.args.should_save:
                torch.save(self.lr_scheduler.state_dict(), os.path.join(output_dir, "scheduler.pt"))

        def _load_from_checkpoint(self, resume_from_checkpoint: str, model=None) -> None:
            folder = Path(resume_from_checkpoint)
            if not self.is_fsdp_enabled or (folder / FSDP_WEIGHTS).exists():
                return super()._load_from_checkpoint(resume_from_checkpoint, model)
            load_full_weights(model if model is not None else self.model, folder)

    OneWeightSet.__name__ = trainer_class.__name__
    return OneWeightSet


def load_full_weights(model, folder: Path) -> None:
    """model.safetensors (every shard of it) into an FSDP-wrapped model as a full state dict, as
    accelerate's load_fsdp_model loads its FULL_STATE_DICT file: every rank reads the whole file."""
    from safetensors.torch import load_file
    from torch.distributed.fsdp import FullStateDictConfig, StateDictType
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

    state = {}
    for file in sorted(folder.glob("model*.safetensors")):
        state |= load_file(str(file))
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, FullStateDictConfig(rank0_only=False)):
        missing, unexpected = model.load_state_dict(state, strict=False)
    if unexpected or any(not k.endswith("lm_head.weight") for k in missing):  # a tied head is saved once
        raise RuntimeError(f"{folder}: weights do not match the model (missing {missing}, unexpected {unexpected})")
