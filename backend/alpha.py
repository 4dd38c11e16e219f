"""α, the merge coefficient of θ_α = (1−α)·θ_low + α·θ_high, as one value: the grid it is read from
(`alpha_grid`, for `sweep --alphas`, `merge --alphas`, `power` and the Launch form), where a point sits
on the α axis (its kind), how it is written (`alpha_text`, in URLs, tables and folder names), its label
(`alpha_label`, "α=0.5", stored as a merged checkpoint's label) and its output folder among several
(`alpha_folder`). Every module that names an α point calls these; tests/test_alpha.py checks that no
other module formats the label, or α with `:g`, itself.

The text is exact: two different α are never written alike, so no two share a label or a folder. A
grid entry that a float cannot hold apart from another number (1.00000000000000001 is the float 1)
is refused when the grid is read, not merged under the other's name."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation
from typing import Literal, NamedTuple

from backend.errors import UserError

PointKind = Literal["endpoint", "interpolated", "extrapolated", "independent"]
MAX_ALPHAS = 64
_NUMBER = r"\s*(-?[\d.]+(?:e-?\d+)?)\s*"
RANGE = re.compile(rf"^{_NUMBER}:{_NUMBER}:{_NUMBER}$")


def alpha_kind(alpha: float | None) -> PointKind:
    """Endpoint (α = 0 or 1), interpolated (between), extrapolated (outside); independent: no α."""
    if alpha is None:
        return "independent"
    if alpha in (0.0, 1.0):
        return "endpoint"
    return "interpolated" if 0.0 < alpha < 1.0 else "extrapolated"


def alpha_text(alpha: float) -> str:
    """α as written: the shortest form (`:g`, -0 as 0) when it reads back as the same number, else
    the shortest that does (Python's repr: 1 + 1e-9 is 1.000000001, not the endpoint 1; 0.1 + 0.2 is
    0.30000000000000004). So distinct α are written distinctly, and the text reads back as α."""
    alpha = float(alpha) + 0.0  # -0.0 + 0.0 is 0.0
    text = f"{alpha:g}"
    return text if float(text) == alpha else repr(alpha)


def alpha_label(alpha: float, spaced: bool = False) -> str:
    """A merged point's label, "α=0.5" (stored as its checkpoint's label), or in prose and pickers
    "α = 0.5" (`spaced`): the one place either is formatted."""
    return f"α{' = ' if spaced else '='}{alpha_text(alpha)}"


def alpha_folder(alpha: float) -> str:
    """The output folder of one α among several (`merge --alphas A,B --out X` writes X/alpha_<α>/):
    as exact as the text, so two α never share one."""
    return f"alpha_{alpha_text(alpha)}"


def alpha_grid(value: str | Iterable[float | str]) -> list[float]:
    """A grid as a spec holds it: text (`parse_alpha_grid`), a list of such texts (the CLI's repeated
    --alpha), or numbers (a stored spec, a Python caller): sorted, distinct, finite."""
    if isinstance(value, str):
        return parse_alpha_grid(value)
    values = list(value)
    if values and all(isinstance(a, str) for a in values):
        return parse_alpha_grid(",".join(values))
    grid = sorted({float(a) + 0.0 for a in values})
    if any(not math.isfinite(a) for a in grid):
        raise UserError("α values must be finite")
    return grid


def parse_alpha_grid(text: str) -> list[float]:
    """`-1:2:0.25` (inclusive range), `-0.5,0,0.5,1,1.5`, or both mixed: `-1:0:0.5,1.25,2`.
    Sorted, de-duplicated; empty, reversed, non-numeric and > 64-point grids are refused, and so is
    an α a float cannot tell apart from another number. A range steps in decimal, exactly: 0:1:0.1
    holds 0.3, not 0.30000000000000004."""
    if not text or not text.strip():
        raise UserError("empty α grid; write e.g. -1:2:0.25 or -0.5,0,0.5,1,1.5")
    exact: list[Decimal] = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        if ":" in part:
            exact += _range(part, text)
        else:
            exact.append(_number(part, f"α {part!r} is not a number"))
    if any(not d.is_finite() or not math.isfinite(float(d)) for d in exact):
        raise UserError("α values must be finite")
    grid = sorted({_held(d) for d in exact})
    if len(grid) > MAX_ALPHAS:
        raise UserError(f"α grid {text.strip()!r} has {len(grid)} points; at most {MAX_ALPHAS}")
    return grid


def _number(text: str, error: str) -> Decimal:
    try:
        return Decimal(text)
    except InvalidOperation:
        raise UserError(error) from None


def _range(part: str, grid: str) -> list[Decimal]:
    m = RANGE.match(part)
    if not m:
        raise UserError(f"bad α range {part!r}; write START:STOP:STEP, e.g. -1:2:0.25")
    texts = m.groups()
    start, stop, step = (_number(t, f"bad α range {part!r}; write START:STOP:STEP, e.g. -1:2:0.25") for t in texts)
    if step <= 0:
        raise UserError(f"α range {part!r} needs a positive step")
    if stop < start:
        raise UserError(f"α range {part!r} is reversed; write {texts[1]}:{texts[0]}:{texts[2]}")
    count = int((stop - start) / step) + 1
    if count > MAX_ALPHAS:
        raise UserError(f"α grid {grid.strip()!r} has more than {MAX_ALPHAS} points")
    return [start + i * step for i in range(count)]


def _held(exact: Decimal) -> float:
    """The float of a grid entry, refused when its text would name another number."""
    alpha = float(exact) + 0.0
    if Decimal(alpha_text(alpha)) != exact:
        raise UserError(
            f"α {exact} cannot be told apart from α {alpha_text(alpha)} (a float holds about 16 significant "
            "digits); write it with at most 15"
        )
    return alpha


class AlphaSwitch(NamedTuple):
    """A point sampled by switching the engine's weights to θ_α of (low, high), with no merged folder."""

    low: str
    high: str
    alpha: float
