"""A node with 8 CUDA GPUs, as a CPU-only job process sees it: `torch.cuda.device_count()` counts
the devices CUDA_VISIBLE_DEVICES leaves visible, read at each call as CUDA reads it at its start
(8 when unset; torch counts with NVML, so the count follows the variable until CUDA initialises).
`torch.cuda.is_available()` stays False, so transformers places the model on the CPU yet sets
`n_gpu = torch.cuda.device_count()` (training_args.py, `_setup_devices`), which is what TRL's
GRPOTrainer checks before it refuses nn.DataParallel. Each card has `total` bytes."""

import os
from types import SimpleNamespace

import torch

GiB = 1 << 30


def eight_gpus(monkeypatch, total: int = 80 * GiB) -> list[int]:
    """Install the stand-in; returns the list of counts it answered, in order."""
    answers: list[int] = []

    def device_count() -> int:
        listed = os.environ.get("CUDA_VISIBLE_DEVICES")
        n = 8 if listed is None else len([d for d in listed.split(",") if d.strip() and int(d) < 8])
        answers.append(n)
        return n

    def get_device_properties(device=0):
        if device_count() == 0:  # CUDA's own refusal with no visible device
            raise RuntimeError("CUDA error: invalid device ordinal")
        return SimpleNamespace(total_memory=total, name="stand-in")

    monkeypatch.setattr(torch.cuda, "device_count", device_count)
    monkeypatch.setattr(torch.cuda, "get_device_properties", get_device_properties)
    return answers
