"""Switch α without disk: update an already-loaded transformers model in place.

θ_low and Δ = θ_high − θ_low are held in float32; set_alpha(α) writes (θ_low + α·Δ) cast to each
parameter's dtype. This is the rollout engines' way to sweep α without reloading the model.
"""

from __future__ import annotations

import torch

from backend.errors import UserError
from backend.merge.engine import validate
from backend.merge.io import Checkpoint


def load_endpoint_tensors(low: str, high: str) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """(θ_low, Δ) in float32 for every float tensor, read chunk-free (the model fits in memory anyway)."""
    ckpts = [Checkpoint(low), Checkpoint(high)]
    try:
        names = validate(ckpts)
        theta, delta = {}, {}
        for name in names:
            lo, hi = (c.resolve(name) for c in ckpts)
            if not lo.is_float:
                continue
            a = ckpts[0].read_chunk(lo, 0, lo.numel).view(lo.shape).float()
            b = ckpts[1].read_chunk(hi, 0, hi.numel).view(hi.shape).float()
            theta[name], delta[name] = a, b - a
        return theta, delta
    finally:
        for c in ckpts:
            c.close()


class LiveAlphaSwitch:
    """set_alpha() rewrites a loaded model's weights to θ_α in place."""

    def __init__(self, model: torch.nn.Module, low: str, high: str):
        self.model = model
        self.theta_low, self.delta = load_endpoint_tensors(low, high)
        params = dict(model.state_dict(keep_vars=True))
        unknown = [n for n in self.theta_low if n not in params]
        tied_ok = {"lm_head.weight"}
        if [n for n in unknown if n not in tied_ok]:
            raise UserError(f"model has no parameter {unknown[0]} that the checkpoints hold")
        self.params = {n: params[n] for n in self.theta_low if n in params}
        self.alpha: float | None = None

    @torch.no_grad()
    def set_alpha(self, alpha: float) -> None:
        for name, param in self.params.items():
            param.data.copy_((self.theta_low[name] + alpha * self.delta[name]).to(param.dtype))
        self.alpha = alpha
