"""MergeRequest: what `python -m backend merge` writes, declared once (backend/specs.py says how a
field declares its option). It names the merge in one of three forms and becomes MergeSpecs."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from backend.merge import methods
from backend.merge.grid import parse_alpha_grid
from backend.merge.spec import DTYPES, SHARD_BYTES

Dtype = Literal[DTYPES]
MethodName = Literal[methods.names()]  # the registry's methods: a new method file is a new choice


class MergeRequest(BaseModel):
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
        if isinstance(v, str):
            return parse_alpha_grid(v)
        if v and all(isinstance(a, str) for a in v):  # the CLI's repeated --alpha / --alphas texts
            return parse_alpha_grid(",".join(v))
        return v

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


class InspectRequest(BaseModel):
    """`python -m backend merge inspect`: two checkpoints to compare (no merge is written)."""

    model_config = ConfigDict(use_attribute_docstrings=True, extra="forbid")

    low: str = Field(min_length=1, title="θ_low (α = 0)")
    """θ_low checkpoint: a folder or a hub name org/name[@revision]."""
    high: str = Field(min_length=1, title="θ_high (α = 1)")
    """θ_high checkpoint: a folder or a hub name org/name[@revision]."""
