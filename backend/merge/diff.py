"""How two checkpoints differ, tensor by tensor: what an α sweep between them has to scale, and
what a save in a narrower dtype kept of an RL update.

An α sweep extrapolates θ_high − θ_low. When the two endpoints differ mostly by one step of their
dtype (one ulp: adjacent representable numbers), that difference is rounding, not learning, and α
scales quantisation noise. Both measures stream the folders in chunks and run on the CPU.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import torch

from backend.errors import UserError
from backend.merge.io import CheckpointFolder

CHUNK = 1 << 22  # elements per read: 16 MiB of float32
ONE_ULP_SAYS = 0.5  # most differing weights one ulp apart: the line says the difference is rounding
BITS = {torch.bfloat16: torch.int16, torch.float16: torch.int16, torch.float32: torch.int32, torch.float64: torch.int64}


def ordered_bits(t: torch.Tensor) -> torch.Tensor:
    """Integers in the order of the floats, so that adjacent numbers of t's dtype differ by exactly 1
    (IEEE bits are sign-magnitude: negatives are mirrored; +0 and -0 both map to 0)."""
    bits = t.view(BITS[t.dtype]).to(torch.int64)
    magnitude = bits & ((1 << (torch.iinfo(BITS[t.dtype]).bits - 1)) - 1)
    return torch.where(bits < 0, -magnitude, bits)


@dataclass
class Difference:
    """Accumulated over tensors: counts and sums, then the figures `merge inspect` prints."""

    compared: int = 0  # float weights in both
    differ: int = 0
    one_ulp: int = 0  # differ by one step of their (common) dtype
    diff_sq: float = 0.0
    low_sq: float = 0.0
    high_sq: float = 0.0
    dot: float = 0.0

    def add(self, low: torch.Tensor, high: torch.Tensor) -> None:
        self.compared += low.numel()
        self.differ += int((low != high).sum())
        if low.dtype == high.dtype:
            self.one_ulp += int(((ordered_bits(high) - ordered_bits(low)).abs() == 1).sum())
        lo, hi = low.double(), high.double()
        self.diff_sq += float(((hi - lo) ** 2).sum())
        self.low_sq += float((lo**2).sum())
        self.high_sq += float((hi**2).sum())
        self.dot += float((lo * hi).sum())

    def figures(self) -> dict[str, float]:
        n = max(self.compared, 1)
        return {
            "weights": self.compared,
            "share_differ": self.differ / n,
            "share_one_ulp": self.one_ulp / n,
            "one_ulp_of_differing": self.one_ulp / self.differ if self.differ else 0.0,
            "relative_norm": math.sqrt(self.diff_sq / self.low_sq) if self.low_sq else 0.0,
            "cosine": self.dot / math.sqrt(self.low_sq * self.high_sq) if self.low_sq and self.high_sq else 0.0,
        }


def chunks(low: CheckpointFolder, high: CheckpointFolder, names: list[str]):
    """(low, high) flat chunks of each named float tensor, in their stored dtypes."""
    for name in names:
        a, b = low.resolve(name), high.resolve(name)
        if a.shape != b.shape:
            raise UserError(f"{name}: shape {list(a.shape)} in {low.folder} but {list(b.shape)} in {high.folder}")
        for lo in range(0, a.numel, CHUNK):
            hi = min(lo + CHUNK, a.numel)
            yield low.read_chunk(a, lo, hi), high.read_chunk(b, lo, hi)


def inspect(low: str | Path, high: str | Path) -> dict[str, float]:
    """The endpoints' difference over every float tensor they share."""
    a, b = CheckpointFolder(low), CheckpointFolder(high)
    try:
        names = sorted(n for n, t in a.tensors.items() if t.is_float and n in b.tensors)
        if not names:
            raise UserError(f"{low} and {high} share no float tensor")
        diff = Difference()
        for x, y in chunks(a, b, names):
            diff.add(x, y)
        out = diff.figures()
        out["dtypes"] = ",".join(sorted({a.tensors[n].dtype for n in names} | {b.tensors[n].dtype for n in names}))
        return out
    finally:
        a.close()
        b.close()


def verdict(figures: dict) -> str:
    """The line that says whether an α sweep has anything to extrapolate."""
    if figures["share_differ"] == 0:
        return "the two checkpoints are identical: every α gives the same model"
    if figures["one_ulp_of_differing"] >= ONE_ULP_SAYS:
        return (
            f"{figures['one_ulp_of_differing']:.0%} of the differing weights are one ulp apart in "
            f"{figures['dtypes']}: the difference is mostly rounding, and α scales quantisation noise"
        )
    return f"{figures['share_differ']:.1%} of the weights differ, most by more than one ulp: a difference to sweep"


@dataclass
class Survival:
    """What a cast kept of an update: of the weights the update moved, the share still off the
    base after rounding, and the norm of the kept update against the float32 one."""

    moved: int = 0
    kept: int = 0
    update_sq: float = 0.0
    kept_sq: float = 0.0

    def add(self, base: torch.Tensor, trained: torch.Tensor, saved: torch.Tensor) -> None:
        b = base.double()
        update, kept = trained.double() - b, saved.double() - b
        moved = update != 0
        self.moved += int(moved.sum())
        self.kept += int((moved & (kept != 0)).sum())
        self.update_sq += float((update**2).sum())
        self.kept_sq += float((kept**2).sum())

    def figures(self) -> dict[str, float]:
        return {
            "update_kept_share": self.kept / self.moved if self.moved else 1.0,
            "update_norm_ratio": math.sqrt(self.kept_sq / self.update_sq) if self.update_sq else 1.0,
        }


def update_survival(base: str | Path, trained: str | Path, dtype: str) -> dict[str, float]:
    """What saving `trained` (float32) in `dtype` (a safetensors name, e.g. BF16) keeps of its update from `base`."""
    from backend.merge.io import ST_DTYPES

    target = ST_DTYPES[dtype]
    a, b = CheckpointFolder(base), CheckpointFolder(trained)
    try:
        survival = Survival()
        names = sorted(n for n, t in b.tensors.items() if t.is_float and n in a.tensors)
        for x, y in chunks(a, b, names):
            survival.add(x, y, y.to(target))
        return survival.figures()
    finally:
        a.close()
        b.close()
