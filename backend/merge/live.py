"""Switch α without disk: update an already-loaded model in place.

θ_low and θ_high are held in their own dtype (4 bytes per parameter for bf16 checkpoints, against
8 for θ_low and Δ in float32); each switch builds θ_α per tensor in float32 with the merge
engine's own arithmetic (`methods.combine_into` of the switch's merge method, linear by default:
(1−α)·θ_low + α·θ_high) and casts it to the parameter's dtype, so a switch gives bit for bit what
loading the folder that `Merge.at_alpha(low, high, α, method)` merges to gives. The engines expose it as
`engine.alpha_switch(low, high)`: this module for transformers, live_vllm.py inside vLLM's workers.
"""

from __future__ import annotations

from collections.abc import Iterator

import torch

from backend.errors import UserError
from backend.merge import methods
from backend.merge.engine import validate
from backend.merge.io import ST_DTYPES, CheckpointFolder


def load_endpoints(
    low: str, high: str, device: str | torch.device = "cpu", pin: bool = False
) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """name -> (θ_low, θ_high) in the checkpoints' own dtype, for every float tensor. pin: read
    straight into page-locked host memory (one host copy, which a device copies from asynchronously)."""
    ckpts = [CheckpointFolder(low), CheckpointFolder(high)]
    try:
        out = {}
        for name in validate(ckpts):
            infos = [c.resolve(name) for c in ckpts]
            if infos[0].is_float:
                out[name] = tuple(_read(c, info, device, pin) for c, info in zip(ckpts, infos, strict=True))
        return out
    finally:
        for c in ckpts:
            c.close()


def _read(ckpt: CheckpointFolder, info, device, pin: bool) -> torch.Tensor:
    if not pin:
        return ckpt.read_chunk(info, 0, info.numel).view(info.shape).to(device)  # read_chunk copies already
    out = torch.empty(info.shape, dtype=ST_DTYPES[info.dtype], pin_memory=True)
    ckpt.read_chunk(info, 0, info.numel, out=out.view(-1))
    return out


class Scratch:
    """Flat buffers reused for every tensor: two float32 ones for the arithmetic and, for endpoints
    kept on the host, two in their dtype on the device that each tensor is copied into before it
    is blended there. A switch allocates nothing (fresh memory for float32 copies of every tensor
    costs more, in page faults, than the arithmetic)."""

    def __init__(self):
        self.bufs: list[torch.Tensor] = []
        self.stage: list[torch.Tensor] = []

    @staticmethod
    def _fit(bufs: list[torch.Tensor], n: int, dtype: torch.dtype, device: torch.device) -> list[torch.Tensor]:
        if bufs and bufs[0].numel() >= n and bufs[0].dtype == dtype and bufs[0].device == device:
            return bufs
        return [torch.empty(n, dtype=dtype, device=device) for _ in range(2)]

    def pair(self, like: torch.Tensor, device: torch.device | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        n = like.numel()
        self.bufs = self._fit(self.bufs, n, torch.float32, device or like.device)
        return self.bufs[0][:n].view(like.shape), self.bufs[1][:n].view(like.shape)

    def staged(self, low: torch.Tensor, high: torch.Tensor, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        """θ_low and θ_high of one tensor on `device`: copied (non_blocking: from pinned memory the
        copy is queued on the stream that then blends, so it needs no wait) unless already there."""
        if low.device == device:
            return low, high
        n = low.numel()
        self.stage = self._fit(self.stage, n, low.dtype, device)
        return tuple(
            buf[:n].view(t.shape).copy_(t, non_blocking=True) for buf, t in zip(self.stage, (low, high), strict=True)
        )


def blend_f32(
    low: torch.Tensor,
    high: torch.Tensor,
    method: str,
    weights: list[float],
    scratch: Scratch,
    device: torch.device | None = None,
) -> torch.Tensor:
    """θ_α for one tensor in float32 on `device` (default: the endpoints'), by the merge engine's own
    `methods.combine_into`."""
    device = device or low.device
    low, high = scratch.staged(low, high, device)
    acc, tmp = scratch.pair(low, device)
    return methods.combine_into(method, acc, (low, high), weights, tmp)


def blended(
    endpoints: dict[str, tuple[torch.Tensor, torch.Tensor]],
    alpha: float,
    method: str = methods.DEFAULT,
    device: torch.device | None = None,
) -> Iterator[tuple[str, torch.Tensor]]:
    """(name, θ_α in the checkpoint's dtype) one tensor at a time, blended on `device` (default: where
    the endpoints are), for a model's load_weights; a tensor may share the scratch buffer, so it is
    valid only until the next one is yielded."""
    scratch, weights = Scratch(), methods.get(method).alpha_weights(alpha)
    for name, (low, high) in endpoints.items():
        yield name, blend_f32(low, high, method, weights, scratch, device).to(low.dtype)


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
