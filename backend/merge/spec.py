"""MergeSpec: a general linear combination Σ w_i·θ_i of checkpoint folders, with any real weights.

Two convenience forms reduce to it:
- the two-endpoint α form:  θ_α = α·θ_high + (1−α)·θ_low
- the task-vector form:     θ_base + Σ λ_i·(θ_i − θ_base) = (1 − Σλ_i)·θ_base + Σ λ_i·θ_i
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

from backend.errors import UserError

DTYPES = ("auto", "float32", "bfloat16", "float16")
# Output shard size: here, not in the engine, so that the CLI can show the default without torch.
SHARD_BYTES = 1 << 30


@dataclass
class MergeSpec:
    models: list[str]  # checkpoint folders
    weights: list[float]
    dtype: str = "auto"  # output dtype; auto = the inputs' dtype
    allow_nonfinite: bool = False
    label: dict = field(default_factory=dict)  # how the user wrote it: {"low","high","alpha"} or {"base","lambdas"}

    def __post_init__(self):
        if len(self.models) != len(self.weights) or not self.models:
            raise UserError("a merge needs one weight per model and at least one model")
        if self.dtype not in DTYPES:
            raise UserError(f"unknown dtype {self.dtype!r}; choose one of {', '.join(DTYPES)}")
        for w in self.weights:
            if not math.isfinite(w):
                raise UserError(f"merge weights must be finite numbers, got {w}")
        total = sum(self.weights)
        if abs(total - 1.0) > 1e-9:
            warnings.warn(
                f"merge weights sum to {total:g}, not 1: the result is rescaled, not an average", stacklevel=2
            )

    @classmethod
    def alpha(cls, low: str, high: str, alpha: float, **kw) -> MergeSpec:
        return cls(
            [str(low), str(high)],
            [1.0 - alpha, alpha],
            label={"low": str(low), "high": str(high), "alpha": alpha},
            **kw,
        )

    @classmethod
    def task_vectors(cls, base: str, models: list[str], lambdas: list[float], **kw) -> MergeSpec:
        if len(models) != len(lambdas):
            raise UserError("the task-vector form needs one λ per model")
        label = {"base": str(base), "models": [str(m) for m in models], "lambdas": list(lambdas)}
        return cls([str(base), *map(str, models)], [1.0 - sum(lambdas), *lambdas], label=label, **kw)

    def nonzero_terms(self) -> list[tuple[int, float]]:
        """(input index, weight) of the terms that contribute; 0·θ is skipped so that α = 0 or 1
        reproduces an endpoint bit-exactly."""
        return [(i, w) for i, w in enumerate(self.weights) if w != 0.0]

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
    """mergekit's `linear` method with normalize off reproduces Σ w_i·θ_i in float32."""
    config = {
        "merge_method": "linear",
        "models": [{"model": m, "parameters": {"weight": w}} for m, w in zip(spec.models, spec.weights, strict=True)],
        "parameters": {"normalize": False},
        "dtype": "float32",
    }
    if spec.dtype != "auto":
        config["out_dtype"] = spec.dtype
    return yaml.safe_dump(config, sort_keys=False)


def from_mergekit_yaml(text: str | Path) -> MergeSpec:
    try:
        config = yaml.safe_load(Path(text).read_text() if isinstance(text, Path) else text)
        if config.get("merge_method") != "linear":
            raise UserError(f"only mergekit's linear method maps onto a MergeSpec, got {config.get('merge_method')!r}")
        if (config.get("parameters") or {}).get("normalize", True):
            raise UserError(
                "mergekit linear config must set `parameters: {normalize: false}` (normalising changes the weights)"
            )
        models = [(m["model"], float(m["parameters"]["weight"])) for m in config["models"]]
    except (yaml.YAMLError, KeyError, TypeError, AttributeError) as exc:
        raise UserError(f"not a mergekit linear config: {exc}") from exc
    return MergeSpec([m for m, _ in models], [w for _, w in models], dtype=config.get("out_dtype", "auto"))
