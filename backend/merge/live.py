"""Switch α without disk: update an already-loaded model in place.

θ_low and θ_high are held in their own dtype (4 bytes per parameter for bf16 checkpoints, where
θ_low and Δ in float32 took 8); each switch builds θ_α = (1−α)·θ_low + α·θ_high per tensor in
float32 with the merge engine's own arithmetic (`combine_into`, zero-weight terms skipped) and
casts it to the parameter's dtype, so a switch gives bit for bit what loading the merged folder
gives. The engines expose it as `engine.alpha_switch(low, high)`: this module for transformers,
live_vllm.py inside vLLM's workers.
"""

from __future__ import annotations

from collections.abc import Iterator

import torch

from backend.errors import UserError
from backend.merge.engine import combine_into, validate
from backend.merge.io import Checkpoint


def load_endpoints(
    low: str, high: str, device: str | torch.device = "cpu"
) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """name -> (θ_low, θ_high) in the checkpoints' own dtype, for every float tensor."""
    ckpts = [Checkpoint(low), Checkpoint(high)]
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


def blend(low: torch.Tensor, high: torch.Tensor, alpha: float, dtype: torch.dtype | None = None) -> torch.Tensor:
    """θ_α for one tensor: float32 arithmetic as the merge engine does it, cast to `dtype`."""
    terms = [(i, w) for i, w in enumerate((1.0 - alpha, alpha)) if w != 0.0]
    acc = torch.empty(low.shape, dtype=torch.float32, device=low.device)
    combine_into(acc, [low.float(), high.float()], terms)
    return acc.to(dtype or low.dtype)


def blended(
    endpoints: dict[str, tuple[torch.Tensor, torch.Tensor]], alpha: float
) -> Iterator[tuple[str, torch.Tensor]]:
    """(name, θ_α) one tensor at a time: only one float32 tensor is alive at once."""
    for name, (low, high) in endpoints.items():
        yield name, blend(low, high, alpha)


class LiveAlphaSwitch:
    """set_alpha() rewrites a loaded transformers model's weights to θ_α in place."""

    def __init__(self, model: torch.nn.Module, low: str, high: str):
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
        for name, param in self.params.items():
            low, high = self.endpoints[name]
            param.data.copy_(blend(low, high, alpha, param.dtype))
        self.alpha = alpha
