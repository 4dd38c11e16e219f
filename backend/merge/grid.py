"""The α grid one sweep or one merge pass covers, written once for `sweep --alphas`, `merge
--alphas` and the Launch form."""

from __future__ import annotations

import math
import re

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
