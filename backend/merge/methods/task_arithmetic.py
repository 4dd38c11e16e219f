"""Task arithmetic (Ilharco et al. 2023): θ = θ_base + Σ λ_i·(θ_i − θ_base). The first model is the
base; its own weight must be 0, since its task vector θ_base − θ_base is zero. The α form takes
θ_low as the base and λ = α for θ_high. Computed as written, task vector by task vector: a base
with large weights and small task vectors keeps the task vectors' precision, which the expanded
linear form (1 − Σλ)·θ_base + Σ λ_i·θ_i rounds away when Σλ is far from 1."""

from __future__ import annotations

from backend.errors import UserError
from backend.merge.methods.base import MergeMethod
from backend.merge.methods.registry import register


class TaskArithmetic(MergeMethod):
    name = "task_arithmetic"
    formula = "θ_base + Σ λ_i·(θ_i − θ_base)"
    mergekit_name = "task_arithmetic"

    def check(self, weights):
        if weights[0] != 0.0:
            raise UserError(
                "task arithmetic takes the first model as the base, whose weight must be 0 "
                f"(its task vector is zero), got {weights[0]}"
            )

    def alpha_weights(self, alpha):
        return [0.0, alpha]

    def combine_into(self, acc, inputs, weights, tmp):
        base = inputs[0]
        acc.copy_(base)  # exact in float32
        for x, lam in zip(inputs[1:], weights[1:], strict=True):
            if lam != 0.0:
                tmp.copy_(x).sub_(base)  # θ_i − θ_base in float32 (a bf16 base is widened exactly)
                acc.add_(tmp, alpha=lam)
        return acc

    def to_mergekit(self, models, weights):
        return {
            "merge_method": "task_arithmetic",
            "base_model": models[0],
            "models": [{"model": m, "parameters": {"weight": w}} for m, w in zip(models[1:], weights[1:], strict=True)],
        }

    def from_mergekit(self, config):
        base = config["base_model"]
        others = [(m["model"], float(m["parameters"]["weight"])) for m in config["models"] if m["model"] != base]
        return [base, *(m for m, _ in others)], [0.0, *(w for _, w in others)]


register(TaskArithmetic())
