"""MergeSpec: checkpoint folders, one real weight each, and the merge method that reads them
(backend/merge/methods/: `linear` Σ w_i·θ_i, `task_arithmetic` θ_base + Σ λ_i·(θ_i − θ_base)).

Two convenience forms:
- the two-endpoint α form, in any method:  linear θ_α = (1−α)·θ_low + α·θ_high
- the task-vector form:                    task_arithmetic with the base first, λ_i for the others
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

from backend.errors import UserError
from backend.merge import methods

DTYPES = ("auto", "float32", "bfloat16", "float16")
# Output shard size: here, not in the engine, so that the CLI can show the default without torch.
SHARD_BYTES = 1 << 30


@dataclass
class MergeSpec:
    models: list[str]  # checkpoint folders
    weights: list[float]
    method: str = methods.DEFAULT  # a name in the methods registry (methods.names())
    dtype: str = "auto"  # output dtype; auto = the inputs' dtype
    allow_nonfinite: bool = False
    label: dict = field(default_factory=dict)  # how the user wrote it: {"low","high","alpha"} or {"base","lambdas"}
    alpha_value: float | None = None  # θ_α's α in the two-endpoint form (made by MergeSpec.alpha); None otherwise

    def __post_init__(self):
        if len(self.models) != len(self.weights) or not self.models:
            raise UserError("a merge needs one weight per model and at least one model")
        if self.dtype not in DTYPES:
            raise UserError(f"unknown dtype {self.dtype!r}; choose one of {', '.join(DTYPES)}")
        for w in self.weights:
            if not math.isfinite(w):
                raise UserError(f"merge weights must be finite numbers, got {w}")
        methods.get(self.method).check(self.weights)

    @classmethod
    def alpha(cls, low: str, high: str, alpha: float, method: str = methods.DEFAULT, **kw) -> MergeSpec:
        return cls(
            [str(low), str(high)],
            methods.get(method).alpha_weights(alpha),
            method,
            label={"low": str(low), "high": str(high), "alpha": alpha},
            alpha_value=alpha,
            **kw,
        )

    @classmethod
    def task_vectors(cls, base: str, models: list[str], lambdas: list[float], **kw) -> MergeSpec:
        if len(models) != len(lambdas):
            raise UserError("the task-vector form needs one λ per model")
        label = {"base": str(base), "models": [str(m) for m in models], "lambdas": list(lambdas)}
        return cls([str(base), *map(str, models)], [0.0, *lambdas], "task_arithmetic", label=label, **kw)

    def to_dict(self) -> dict:
        return asdict(self)


def parse_model_weight(text: str) -> tuple[str, float]:
    """`DIR:WEIGHT` (the last colon separates, so paths may hold colons)."""
    path, sep, weight = text.rpartition(":")
    try:
        if not sep:
            raise ValueError
        return path, float(weight)
    except ValueError as exc:
        raise UserError(f"--model expects DIR:WEIGHT, got {text!r}") from exc


def to_mergekit_yaml(spec: MergeSpec) -> str:
    """The same merge as a mergekit config, computed in float32 (normalising off for linear)."""
    config = {**methods.get(spec.method).to_mergekit(spec.models, spec.weights), "dtype": "float32"}
    if spec.dtype != "auto":
        config["out_dtype"] = spec.dtype
    return yaml.safe_dump(config, sort_keys=False)


def from_mergekit_yaml(text: str | Path) -> MergeSpec:
    try:
        config = yaml.safe_load(Path(text).read_text() if isinstance(text, Path) else text)
        method = methods.by_mergekit_name(config.get("merge_method"))
        models, weights = method.from_mergekit(config)
    except (yaml.YAMLError, KeyError, TypeError, AttributeError, ValueError) as exc:
        raise UserError(f"not a mergekit config this project reads: {exc}") from exc
    return MergeSpec(models, weights, method.name, dtype=config.get("out_dtype", "auto"))
