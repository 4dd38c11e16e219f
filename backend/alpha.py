"""α, the merge coefficient of θ_α = (1−α)·θ_low + α·θ_high, as one value: where a point sits on the
α axis (its kind), how it is written (`alpha_text`, in URLs and tables) and its label (`alpha_label`,
"α=0.5", stored as a merged checkpoint's label). Every module that names an α point calls these;
tests/test_alpha.py checks that no other module formats the label itself."""

from __future__ import annotations

from typing import Literal, NamedTuple

PointKind = Literal["endpoint", "interpolated", "extrapolated", "independent"]


def alpha_kind(alpha: float | None) -> PointKind:
    """Endpoint (α = 0 or 1), interpolated (between), extrapolated (outside); independent: no α."""
    if alpha is None:
        return "independent"
    if alpha in (0.0, 1.0):
        return "endpoint"
    return "interpolated" if 0.0 < alpha < 1.0 else "extrapolated"


def alpha_text(alpha: float) -> str:
    """α as written: the shortest form (`:g`, -0 as 0), unless that would name another kind of point
    (1 + 1e-9 is no endpoint: written in full, 1.000000001)."""
    alpha = float(alpha) + 0.0  # -0.0 + 0.0 is 0.0
    text = f"{alpha:g}"
    return text if alpha_kind(float(text)) == alpha_kind(alpha) else repr(alpha)


def alpha_label(alpha: float, spaced: bool = False) -> str:
    """A merged point's label, "α=0.5" (stored as its checkpoint's label), or in prose and pickers
    "α = 0.5" (`spaced`): the one place either is formatted."""
    return f"α{' = ' if spaced else '='}{alpha_text(alpha)}"


class AlphaSwitch(NamedTuple):
    """A point sampled by switching the engine's weights to θ_α of (low, high), with no merged folder."""

    low: str
    high: str
    alpha: float
