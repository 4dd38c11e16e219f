"""The `merge` command's one config, MergeConfig: every option of `merge` with its default and doc,
in one place (backend/specs.py says how a field declares an option); InspectRequest, `merge inspect`'s.

A config names the merge in one of three forms and becomes one `Merge` per output: checkpoint
folders, one real weight each, and the merge method that reads them (backend/merge/methods/:
`linear` Σ w_i·θ_i, `task_arithmetic` θ_base + Σ λ_i·(θ_i − θ_base)). A Merge holds values, not
options; the sweep makes its own (Merge.at_alpha) with the config's defaults.

Two convenience forms of a Merge:
- the two-endpoint α form, in any method:  linear θ_α = (1−α)·θ_low + α·θ_high
- the task-vector form:                    task_arithmetic with the base first, λ_i for the others
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from backend.alpha import alpha_folder, alpha_grid
from backend.errors import UserError
from backend.merge import methods

DTYPES = ("auto", "float32", "bfloat16", "float16")
# Output shard size: here, not in the engine, so that the CLI can show the default without torch.
SHARD_BYTES = 1 << 30

Dtype = Literal[DTYPES]
MethodName = Literal[methods.names()]  # the registry's methods: a new method file is a new choice


class MergeConfig(BaseModel):
    """`python -m backend merge`: what to merge, and how the outputs are written."""

    model_config = ConfigDict(use_attribute_docstrings=True, extra="forbid")

    output_dir: Path = Field(title="Output folder", json_schema_extra={"cli": "--out"})
    """Output folder (with several α: one alpha_<α>/ per value)."""
    low: str | None = Field(None, title="θ_low (α = 0)")
    """θ_low checkpoint (α = 0), a folder or org/name[@revision]: the α form, with --high and --alphas."""
    high: str | None = Field(None, title="θ_high (α = 1)")
    """θ_high checkpoint (α = 1), a folder or org/name[@revision]."""
    alphas: list[float] = Field([], title="α grid", json_schema_extra={"aliases": ["--alpha"]})
    """Any real α, one merge each in one pass: a grid as for `sweep` ("-1:2:0.25", "-0.5,0,1.5", or
    both mixed), or repeat the option."""
    models: list[str] = Field([], title="Models", json_schema_extra={"cli": "--model"})
    """DIR:WEIGHT (DIR a folder or org/name[@revision]), repeatable: the general form Σ w_i·θ_i."""
    base: str | None = Field(None, title="Base / SFT checkpoint")
    """With --model: task vectors θ_base + Σ λ(θ_i − θ_base)."""
    method: MethodName | None = Field(None, title="Merge method")
    """linear (Σ w_i·θ_i; the default) or task_arithmetic (θ_base + Σ λ_i·(θ_i − θ_base): the first
    model is the base, with weight 0; --base implies it; in the α form θ_low is the base and λ = α)."""
    mergekit: Path | None = Field(None, title="mergekit YAML")
    """Read the merge from a mergekit linear YAML."""
    export_mergekit: Path | None = Field(None, title="Export mergekit YAML")
    """Also write the merge as mergekit YAML."""
    dtype: Dtype = Field("auto", title="Output dtype")
    """Output dtype; auto: the inputs' dtype."""
    allow_nonfinite: bool = Field(False, title="Allow inf/NaN")
    """Keep inf/NaN tensors instead of failing."""
    device: str = Field("cpu", title="Device")
    """cpu or cuda (cuda:N): where the tensors are combined."""
    shard_size_mb: int = Field(SHARD_BYTES >> 20, ge=1, title="Shard size (MB)")
    """Output safetensors shard size."""
    overwrite: bool = Field(False, title="Overwrite")
    """Replace an existing output folder."""
    register_outputs: bool = Field(False, title="Register", json_schema_extra={"cli": "--register"})
    """Record the outputs as checkpoints rows in --db."""

    @field_validator("alphas", mode="before")
    @classmethod
    def _grid(cls, v):
        return alpha_grid(v)  # text, the CLI's repeated --alpha / --alphas texts, or numbers

    @model_validator(mode="after")
    def _one_form(self):
        if self.low or self.high or self.alphas:
            if not (self.low and self.high and self.alphas):
                raise ValueError("the α form needs --low DIR --high DIR and at least one --alphas")
        elif not (self.models or self.mergekit):
            raise ValueError("say what to merge: --low/--high/--alphas, --model DIR:WEIGHT ..., or --mergekit FILE")
        if self.base and self.method not in (None, "task_arithmetic"):
            raise ValueError(f"--base makes task vectors (task_arithmetic); drop it or --method {self.method}")
        if self.mergekit and self.method:
            raise ValueError("a mergekit YAML names its method itself (merge_method); drop --method")
        return self

    @property
    def merge_method(self) -> str:
        return self.method or ("task_arithmetic" if self.base else methods.DEFAULT)

    def merges(self, local: Callable[[str], str] = str) -> tuple[list[Merge], list[Path]]:
        """One Merge per output folder, in the form the config names; `local` turns a --model
        DIR (a folder or a hub name) into the folder to read."""
        kw = {"dtype": self.dtype, "allow_nonfinite": self.allow_nonfinite}
        if self.alphas:
            merges = [Merge.at_alpha(self.low, self.high, a, self.merge_method, **kw) for a in self.alphas]
            if len(merges) == 1:
                return merges, [self.output_dir]
            return merges, [self.output_dir / alpha_folder(a) for a in self.alphas]
        if self.models:
            pairs = [parse_model_weight(m) for m in self.models]
            paths, weights = [local(p) for p, _ in pairs], [w for _, w in pairs]
            if self.base:
                return [Merge.task_vectors(self.base, paths, weights, **kw)], [self.output_dir]
            return [Merge(paths, weights, self.merge_method, **kw)], [self.output_dir]
        return [from_mergekit_yaml(self.mergekit)], [self.output_dir]


class InspectRequest(BaseModel):
    """`python -m backend merge inspect`: two checkpoints to compare (no merge is written)."""

    model_config = ConfigDict(use_attribute_docstrings=True, extra="forbid")

    low: str = Field(min_length=1, title="θ_low (α = 0)")
    """θ_low checkpoint: a folder or a hub name org/name[@revision]."""
    high: str = Field(min_length=1, title="θ_high (α = 1)")
    """θ_high checkpoint: a folder or a hub name org/name[@revision]."""


@dataclass
class Merge:
    """One output of a merge: its inputs, one real weight each, and how they are combined. Written
    into the output's merge.json and safetensors metadata as its record."""

    models: list[str]  # checkpoint folders
    weights: list[float]
    method: str = methods.DEFAULT  # a name in the methods registry (methods.names()); MergeConfig.method
    dtype: str = DTYPES[0]  # MergeConfig.dtype
    allow_nonfinite: bool = False  # MergeConfig.allow_nonfinite
    alpha: float | None = None  # θ_α's α in the two-endpoint form (Merge.at_alpha); None in the other forms

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
    def at_alpha(cls, low: str, high: str, alpha: float, method: str = methods.DEFAULT, **kw) -> Merge:
        return cls([str(low), str(high)], methods.get(method).alpha_weights(alpha), method, alpha=alpha, **kw)

    @classmethod
    def task_vectors(cls, base: str, models: list[str], lambdas: list[float], **kw) -> Merge:
        if len(models) != len(lambdas):
            raise UserError("the task-vector form needs one λ per model")
        return cls([str(base), *map(str, models)], [0.0, *lambdas], "task_arithmetic", **kw)

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


def to_mergekit_yaml(spec: Merge) -> str:
    """The same merge as a mergekit config, computed in float32 (normalising off for linear)."""
    import yaml  # here, not at the top: the sweep spec imports this module, and the pages import no yaml

    config = {**methods.get(spec.method).to_mergekit(spec.models, spec.weights), "dtype": "float32"}
    if spec.dtype != "auto":
        config["out_dtype"] = spec.dtype
    return yaml.safe_dump(config, sort_keys=False)


def from_mergekit_yaml(text: str | Path) -> Merge:
    import yaml

    try:
        config = yaml.safe_load(Path(text).read_text() if isinstance(text, Path) else text)
        method = methods.by_mergekit_name(config.get("merge_method"))
        models, weights = method.from_mergekit(config)
    except (yaml.YAMLError, KeyError, TypeError, AttributeError, ValueError) as exc:
        raise UserError(f"not a mergekit config this project reads: {exc}") from exc
    return Merge(models, weights, method.name, dtype=config.get("out_dtype", "auto"))
