"""Switch α without disk: update an already-loaded model in place.

θ_low and θ_high are held in their own dtype (4 bytes per parameter for bf16 checkpoints, where
θ_low and Δ in float32 took 8); each switch builds θ_α per tensor in float32 with the merge
engine's own arithmetic (`methods.combine_into` of the switch's merge method, linear by default:
(1−α)·θ_low + α·θ_high) and casts it to the parameter's dtype, so a switch gives bit for bit what
loading the folder that `MergeSpec.alpha(low, high, α, method)` merges to gives. The engines expose it as `engine.alpha_switch(low, high)`: this module for transformers,
live_vllm.py inside vLLM's workers.
"""

from __future__ import annotations

from collections.abc import Iterator

import torch

from backend.errors import UserError
from backend.merge import methods
from backend.merge.engine import validate
from backend.merge.io import CheckpointFolder


def load_endpoints(
    low: str, high: str, device: str | torch.device = "cpu"
) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """name -> (θ_low, θ_high) in the checkpoints' own dtype, for every float tensor."""
    ckpts = [CheckpointFolder(low), CheckpointFolder(high)]
    try:
        out = {}
        for name in validate(ckpts):
            lo, hi = (c.resolve(name) for c in ckpts)
            if not lo.is_float:
                continue
            a = ckpts[0].read_chunk(lo, 0, lo.numel).view(lo.shape).clone()
            b = ckpts[1].read_chunk(hi, 0, hi.numel).view(hi.shape).clone()
            out[name] = (a.to(device), b.to(device))
        return out
    finally:
        for c in ckpts:
            c.close()


class Scratch:
    """Two flat float32 buffers reused for every tensor: a switch allocates nothing (fresh memory
    for float32 copies of every tensor costs more, in page faults, than the arithmetic)."""

    def __init__(self):
        self.bufs: list[torch.Tensor] = []

    def pair(self, like: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        n = like.numel()
        if not self.bufs or self.bufs[0].numel() < n or self.bufs[0].device != like.device:
            self.bufs = [torch.empty(n, dtype=torch.float32, device=like.device) for _ in range(2)]
        return self.bufs[0][:n].view(like.shape), self.bufs[1][:n].view(like.shape)


def blend_f32(
    low: torch.Tensor, high: torch.Tensor, method: str, weights: list[float], scratch: Scratch
) -> torch.Tensor:
    """θ_α for one tensor in float32, by the merge engine's own `methods.combine_into`."""
    acc, tmp = scratch.pair(low)
    return methods.combine_into(method, acc, (low, high), weights, tmp)


def blended(
    endpoints: dict[str, tuple[torch.Tensor, torch.Tensor]], alpha: float, method: str = methods.DEFAULT
) -> Iterator[tuple[str, torch.Tensor]]:
    """(name, θ_α in the checkpoint's dtype) one tensor at a time, for a model's load_weights; a
    tensor may share the scratch buffer, so it is valid only until the next one is yielded."""
    scratch, weights = Scratch(), methods.get(method).alpha_weights(alpha)
    for name, (low, high) in endpoints.items():
        yield name, blend_f32(low, high, method, weights, scratch).to(low.dtype)


class LiveAlphaSwitch:
    """set_alpha() rewrites a loaded transformers model's weights to θ_α in place."""

    def __init__(self, model: torch.nn.Module, low: str, high: str, method: str = methods.DEFAULT):
        self.method = methods.get(method).name  # an unknown name fails here, before any load
        self.model = model
        device = next(model.parameters()).device
        self.endpoints = load_endpoints(low, high, device)
        params = dict(model.state_dict(keep_vars=True))
        unknown = [n for n in self.endpoints if n not in params and n != "lm_head.weight"]  # tied head
        if unknown:
            raise UserError(f"model has no parameter {unknown[0]} that the checkpoints hold")
        self.params = {n: params[n] for n in self.endpoints if n in params}
        self.alpha: float | None = None

    @torch.no_grad()
    def set_alpha(self, alpha: float) -> None:
        scratch, weights = Scratch(), methods.get(self.method).alpha_weights(alpha)
        for name, param in self.params.items():
            low, high = self.endpoints[name]
            param.data.copy_(blend_f32(low, high, self.method, weights, scratch))  # cast into the parameter's dtype
        self.alpha = alpha
