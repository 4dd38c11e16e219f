"""Job specs: one pydantic model drives the CLI, the dashboard form and the stored experiment."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from backend.errors import UserError

MAX_ALPHAS = 64
RANGE = re.compile(r"^\s*(-?[\d.]+(?:e-?\d+)?)\s*:\s*(-?[\d.]+(?:e-?\d+)?)\s*:\s*(-?[\d.]+(?:e-?\d+)?)\s*$")


def parse_alpha_grid(text: str) -> list[float]:
    """`-1:2:0.25` (inclusive range), `-0.5,0,0.5,1,1.5`, or both mixed: `-1:0:0.5,1.25,2`.
    Sorted, de-duplicated; empty, reversed, non-numeric and > 64-point grids are refused."""
    if not text or not text.strip():
        raise UserError("empty α grid; write e.g. -1:2:0.25 or -0.5,0,0.5,1,1.5")
    alphas: list[float] = []
    for part in (p for p in text.split(",") if p.strip()):
        if ":" in part:
            m = RANGE.match(part)
            if not m:
                raise UserError(f"bad α range {part.strip()!r}; write START:STOP:STEP, e.g. -1:2:0.25")
            start, stop, step = (float(x) for x in m.groups())
            if step <= 0:
                raise UserError(f"α range {part.strip()!r} needs a positive step")
            if stop < start:
                raise UserError(f"α range {part.strip()!r} is reversed; write {stop:g}:{start:g}:{step:g}")
            count = math.floor((stop - start) / step + 1e-9) + 1
            if count > MAX_ALPHAS:
                raise UserError(f"α grid {text.strip()!r} has more than {MAX_ALPHAS} points")
            alphas += [round(start + i * step, 10) for i in range(count)]
        else:
            try:
                alphas.append(float(part))
            except ValueError:
                raise UserError(f"α {part.strip()!r} is not a number") from None
    if any(not math.isfinite(a) for a in alphas):
        raise UserError("α values must be finite")
    grid = sorted(set(alphas))
    if len(grid) > MAX_ALPHAS:
        raise UserError(f"α grid {text.strip()!r} has {len(grid)} points; at most {MAX_ALPHAS}")
    return grid


class SamplingOptions(BaseModel):
    setting: Literal["reasoning", "tool", "agentic"] = "reasoning"
    n: int = Field(8, ge=1, le=1024)
    temperature: float = Field(1.0, ge=0)
    top_p: float = Field(1.0, gt=0, le=1)
    max_tokens: int = Field(1024, ge=1)
    seed: int = 0


class ProblemSelection(BaseModel):
    bench: str = "builtin"
    difficulty: Literal["easy", "medium", "hard"] | None = None
    problems: list[str] = []
    limit: int | None = Field(None, ge=1)


class RunOptions(BaseModel):
    engine: Literal["auto", "transformers", "vllm"] = "auto"
    executor: Literal["local", "ray"] = "local"
    ray_address: str | None = None  # auto | HOST:PORT; None starts a local Ray
    judge_backend: Literal["bwrap", "docker", "none"] = "bwrap"
    time_limit_s: float | None = None  # override the problems' own limits
    memory_limit_mb: int | None = None


def same_checkpoint(a: str, b: str) -> bool:
    """By content, not by spelling: `runs/low/` and `runs/low` (or a copy) are one checkpoint."""
    pa, pb = Path(a).expanduser().resolve(), Path(b).expanduser().resolve()
    if pa == pb:
        return True
    if not ((pa / "config.json").is_file() and (pb / "config.json").is_file()):
        return False  # a missing folder is reported on its own
    from backend.merge.io import Checkpoint, content_hash

    return content_hash(Checkpoint(pa)) == content_hash(Checkpoint(pb))


class SweepSpec(ProblemSelection, SamplingOptions, RunOptions):
    kind: Literal["sweep"] = "sweep"
    low: str
    high: str
    alphas: list[float]
    keep_merged: bool = True  # False: switch α in the loaded model, write no merged folders
    # a sweep between identical endpoints shows one model at every α: refused unless asked for
    # (the lab's CI-sized smoke build, whose two RL runs may leave the weights where SFT put them)
    allow_same_endpoints: bool = False
    independent: list[str] = []  # independently trained checkpoints evaluated alongside, overlaid on the frontier

    @field_validator("alphas", mode="before")
    @classmethod
    def _grid(cls, v):
        return parse_alpha_grid(v) if isinstance(v, str) else sorted(set(float(a) for a in v))

    @model_validator(mode="after")
    def _distinct(self):
        if not self.low.strip() or not self.high.strip():
            raise ValueError("choose both endpoints, θ_low and θ_high")
        if not self.allow_same_endpoints and same_checkpoint(self.low, self.high):
            raise ValueError("θ_low and θ_high are the same checkpoint (identical content); choose two different ones")
        return self


class EvalSpec(ProblemSelection, SamplingOptions, RunOptions):
    kind: Literal["eval"] = "eval"
    checkpoints: list[str] = Field(min_length=1)


class ImportSpec(BaseModel):
    kind: Literal["import"] = "import"
    source: Literal["lcb", "ccplus", "builtin"]
    path: str | None = None
    version: str | None = None  # LiveCodeBench: None is all the source holds


def validate_spec(cls: type[BaseModel], data: dict) -> BaseModel:
    """Build a spec, turning validation errors into one actionable UserError line."""
    try:
        return cls(**data)
    except UserError:
        raise
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        cause = err.get("ctx", {}).get("error")
        message = str(cause) if isinstance(cause, UserError) else err["msg"].removeprefix("Value error, ")
        raise UserError(f"{where}: {message}" if where else message) from None  # a whole-spec rule names its fields
