"""Linear: θ = Σ w_i·θ_i with any real weights; the α form is (1−α)·θ_low + α·θ_high, which is
θ_low + α·(θ_high − θ_low), interpolation for α in [0, 1] and extrapolation outside it."""

from __future__ import annotations

import warnings

from backend.merge.methods.base import MergeMethod, as_f32
from backend.merge.methods.registry import register


class Linear(MergeMethod):
    name = "linear"
    formula = "Σ w_i·θ_i"
    mergekit_name = "linear"  # with parameters.normalize false

    def check(self, weights):
        total = sum(weights)
        if abs(total - 1.0) > 1e-9:
            warnings.warn(
                f"merge weights sum to {total:g}, not 1: the result is rescaled, not an average", stacklevel=4
            )

    def alpha_weights(self, alpha):
        return [1.0 - alpha, alpha]

    def combine_into(self, acc, inputs, weights, tmp):
        """As torch computes `torch.add(w_0·x_0, x_1, alpha=w_1)`: the first term a product, each
        further term one fused multiply-add pass. A zero-weight term is skipped, so α = 0 and 1
        give the endpoints bit for bit."""
        import torch

        terms = [(x, w) for x, w in zip(inputs, weights, strict=True) if w != 0.0]
        if not terms:
            return acc.zero_()
        (first, w0), rest = terms[0], terms[1:]
        torch.mul(as_f32(first, tmp), w0, out=acc)
        for x, w in rest:
            acc.add_(as_f32(x, tmp), alpha=w)
        return acc

    def to_mergekit(self, models, weights):
        return {
            "merge_method": "linear",
            "models": [{"model": m, "parameters": {"weight": w}} for m, w in zip(models, weights, strict=True)],
            "parameters": {"normalize": False},
        }

    def from_mergekit(self, config):
        from backend.errors import UserError

        if (config.get("parameters") or {}).get("normalize", True):
            raise UserError(
                "mergekit linear config must set `parameters: {normalize: false}` (normalising changes the weights)"
            )
        models = [(m["model"], float(m["parameters"]["weight"])) for m in config["models"]]
        return [m for m, _ in models], [w for _, w in models]


register(Linear())
