"""The frontier scatter: optimization against correctness failures, each point with its 95% CI bars
in its own colour and a label placed where it covers no other label, point or CI bar.

Labels are placed in pixels, so the figure is drawn at a fixed size with fixed margins (the page
draws it at that size, and the exports keep it): with a stretched width the pixels per unit of each
axis, and so every distance the placement relied on, would change."""

from __future__ import annotations

import math
from dataclasses import dataclass

import plotly.graph_objects as go
import polars as pl
from plotly.colors import sample_colorscale

from backend.alpha import alpha_label, alpha_text
from backend.outcomes import OutcomeClass
from dashboard.plots import EXPERIMENT_COLORS, LAYOUT, Tables, _rgba, _series, _titled, fitted_range

# filled shapes with a dark outline: an open marker in the colour scale's yellow vanished on white
MARKERS = {"endpoint": "diamond", "interpolated": "circle", "extrapolated": "square", "independent": "x"}
SHAPES = "◆ endpoint (α = 0, 1) · ● interpolated · ■ extrapolated · ✕ not merged"  # the legend's key to MARKERS
NOT_MERGED = "#CC79A7"  # the colour of checkpoints evaluated as they are (the SFT start, another run)
# Viridis without its last, palest eighth: an α at the top of the grid stays visible on white, bars included
ALPHA_SCALE = [[i / 8, c] for i, c in enumerate(sample_colorscale("Viridis", [0.88 * i / 8 for i in range(9)]))]
CI_OPACITY = 0.45  # each point's bars in its colour, faded so that crossing bars do not hide the points
WIDTH, HEIGHT = 900, 640
MARGIN = dict(l=75, r=110, t=85, b=175)  # fixed (no auto-expansion): the plot area must be known to place labels
LEGEND_ROW = 24  # pixels per extra legend row, added below the plot when overlays add entries
LABEL_FONT = 12
MARKER_HALF = 7  # half the drawn marker's box in pixels (size 12–13 with a 1 px outline)
CAP = 3  # half the length of a CI bar's end caps, in pixels
# where a label may sit: its nearest edge this many pixels from its point, in these directions (degrees,
# counter-clockwise from the right), nearest first; past the last, a label is left to the hover
RADII = (3, 9, 16, 25, 36, 50, 66, 85, 108, 135, 165)
ANGLES = (0, 180, 90, 270, 45, 135, 315, 225, 22.5, 157.5, 337.5, 202.5, 67.5, 112.5, 292.5, 247.5)


def failure_scatter(tables: Tables, experiment: str | None = None) -> go.Figure:
    """One experiment: α as colour (ALPHA_SCALE); several: one colour per experiment. Checkpoints that are
    not merged (the SFT start of both endpoints, another run) carry their own marker and colour."""
    series = _series(tables)
    single = len(series) == 1
    fig, points, xs, ys = go.Figure(), [], [], []
    for i, (name, table) in enumerate(series.items()):
        color = EXPERIMENT_COLORS[i % len(EXPERIMENT_COLORS)]
        merged = table.filter(pl.col("alpha").is_not_null()).sort("alpha")
        others = table.filter(pl.col("alpha").is_null())
        for part, is_merged in ((merged, True), (others, False)):
            if not len(part):
                continue
            colors = _alpha_colors(part["alpha"].to_list()) if single and is_merged else None
            colors = colors or [color if is_merged or not single else NOT_MERGED] * len(part)
            _ci_bars(fig, part, colors, name)
            fig.add_trace(_points(part, is_merged, single, name, colors[0]))
            xs += _extent(part, OutcomeClass.CORRECTNESS_FAILURE)
            ys += _extent(part, OutcomeClass.OPTIMIZATION_FAILURE)
            points += _labelled(part, is_merged)
    rows = max(0, math.ceil(len([t for t in fig.data if t.showlegend is not False]) / 3) - 1)
    margin = {**MARGIN, "b": MARGIN["b"] + LEGEND_ROW * rows}
    # at least 5 points of each share: with no failure of either kind every tick read "0%"
    x_range, y_range = fitted_range(xs or [0.0], min_span=0.05), fitted_range(ys or [0.0], min_span=0.05)
    area = Area(WIDTH, HEIGHT + LEGEND_ROW * rows, margin, x_range, y_range)
    fig.update_layout(
        title=_titled("The correctness–efficiency frontier (95% CIs over problems)", experiment),
        xaxis=dict(title="correctness failures (fraction of samples)", tickformat=".0%", range=area.x_range),
        yaxis=dict(title="optimization failures (fraction of samples)", tickformat=".0%", range=area.y_range),
        legend=dict(
            orientation="h", x=0, y=-62 / area.plot_height, yanchor="top", title=dict(text=SHAPES + "<br>", side="top")
        ),
        **{**LAYOUT, "margin": {**margin, "autoexpand": False}},
        width=area.width,
        height=area.height,
        annotations=label_annotations(points, area),
    )
    if max(xs + ys, default=0.0) == 0.0:  # every point at (0, 0): say why, not draw it as a frontier
        fig.add_annotation(
            text=NO_FAILURES, xref="paper", yref="paper", x=0.5, y=0.5, showarrow=False, font=dict(size=13)
        )
    return fig


NO_FAILURES = (
    "No optimization or correctness failure here: every sample is correct<br>or a format failure (no runnable "
    "program), so there is no frontier to draw"
)


def _alpha_colors(alphas: list[float]) -> list[str]:
    """Each α's colour on the markers' scale (cmin and cmax: the smallest and largest α)."""
    lo, hi = min(alphas), max(alphas)
    return sample_colorscale(ALPHA_SCALE, [(a - lo) / (hi - lo) if hi > lo else 0.5 for a in alphas])


def _points(part: pl.DataFrame, is_merged: bool, single: bool, name: str, color: str) -> go.Scatter:
    symbols = [MARKERS[k] for k in part["point_kind"]]
    outline = dict(width=1, color="#333")
    if single and is_merged:
        alphas = part["alpha"].to_list()
        lo, hi = min(alphas), max(alphas)
        marker = dict(
            size=12,
            color=alphas,
            colorscale=ALPHA_SCALE,
            cmin=lo,
            cmax=hi if hi > lo else lo + 1,
            showscale=True,
            colorbar=dict(title="α", x=1.02, xanchor="left", y=0.5, len=1.0, thickness=18),
            symbol=symbols,
            line=outline,
        )
    else:
        marker = dict(size=12 if is_merged else 13, color=color, symbol=symbols, line=outline)
    # not "independently trained": the SFT checkpoint is the shared start of both endpoints
    label = (
        ("merged (α)" if is_merged else "not merged (evaluated as is)")
        if single
        else (name if is_merged else f"{name}: not merged")
    )
    return go.Scatter(
        x=part[OutcomeClass.CORRECTNESS_FAILURE].to_list(),
        y=part[OutcomeClass.OPTIMIZATION_FAILURE].to_list(),
        mode="markers+lines" if is_merged else "markers",
        name=label,
        marker=marker,
        legendgroup=name,
        customdata=_scatter_hover(part),
        line=dict(color="#bbbbbb" if single else color, width=1),
        hovertemplate=(f"{name}<br>" if name else "") + "α=%{customdata[0]} · n=%{customdata[1]} samples<br>"
        "correctness failures %{x:.1%} (95% CI %{customdata[2]:.1%}–%{customdata[3]:.1%})<br>"
        "optimization failures %{y:.1%} (95% CI %{customdata[4]:.1%}–%{customdata[5]:.1%})<extra></extra>",
    )


def _ci_bars(fig: go.Figure, part: pl.DataFrame, colors: list[str], group: str) -> None:
    """One trace per point, drawn under the points: Plotly gives a trace's error bars one colour."""
    if "correctness_failure_lo" not in part.columns:
        return
    for r, color in zip(part.iter_rows(named=True), colors, strict=True):
        x, y = r[OutcomeClass.CORRECTNESS_FAILURE], r[OutcomeClass.OPTIMIZATION_FAILURE]
        bar = dict(type="data", symmetric=False, color=_faded(color), thickness=1.5, width=CAP)
        fig.add_trace(
            go.Scatter(
                x=[x],
                y=[y],
                mode="markers",
                marker=dict(opacity=0),
                hoverinfo="skip",
                showlegend=False,
                legendgroup=group,
                name=f"{r['label']}: 95% CI",
                error_x=bar
                | dict(array=[r["correctness_failure_hi"] - x], arrayminus=[x - r["correctness_failure_lo"]]),
                error_y=bar
                | dict(array=[r["optimization_failure_hi"] - y], arrayminus=[y - r["optimization_failure_lo"]]),
            )
        )


def _faded(color: str) -> str:
    """'#rrggbb' or 'rgb(r, g, b)' at CI_OPACITY."""
    if color.startswith("#"):
        return _rgba(color, CI_OPACITY)
    return color.replace("rgb(", "rgba(").replace(" ", "").removesuffix(")") + f",{CI_OPACITY})"


def _extent(t: pl.DataFrame, cls: str) -> list[float]:
    """The values an axis must show: the points and, when the table has them, their CI ends."""
    ends = [f"{cls}_lo", f"{cls}_hi"] if f"{cls}_lo" in t.columns else []
    return [v for c in (cls, *ends) for v in t[c].to_list() if v is not None and v == v]


def _scatter_hover(t: pl.DataFrame) -> list[list]:
    cols = ["correctness_failure_lo", "correctness_failure_hi", "optimization_failure_lo", "optimization_failure_hi"]
    have = all(c in t.columns for c in [*cols, "n_samples"])
    return [
        [
            alpha_text(r["alpha"]) if r["alpha"] is not None else r["label"],
            r["n_samples"] if have else "?",
            *((r[c] for c in cols) if have else (float("nan"),) * 4),
        ]
        for r in t.iter_rows(named=True)
    ]


@dataclass(frozen=True)
class Point:
    """A labelled point in data units, with its CI ends (equal to the point where the table has none)."""

    x: float
    y: float
    text: str
    x_lo: float
    x_hi: float
    y_lo: float
    y_hi: float


def _labelled(part: pl.DataFrame, is_merged: bool) -> list[Point]:
    have = "correctness_failure_lo" in part.columns
    out = []
    for r in part.iter_rows(named=True):
        x, y = r[OutcomeClass.CORRECTNESS_FAILURE], r[OutcomeClass.OPTIMIZATION_FAILURE]
        text = alpha_label(r["alpha"]) if is_merged else r["label"]
        ends = (
            (
                r["correctness_failure_lo"],
                r["correctness_failure_hi"],
                r["optimization_failure_lo"],
                r["optimization_failure_hi"],
            )
            if have
            else (x, x, y, y)
        )
        out.append(Point(x, y, text, *ends))
    return out


@dataclass(frozen=True)
class Area:
    """The figure's size, margins and axis ranges: where a value lands in pixels (y grows downwards)."""

    width: int
    height: int
    margin: dict
    x_range: list[float]
    y_range: list[float]

    @property
    def plot_height(self) -> float:
        return self.height - self.margin["t"] - self.margin["b"]

    def px(self, x: float, y: float) -> tuple[float, float]:
        (x0, x1), (y0, y1) = self.x_range, self.y_range
        plot_width = self.width - self.margin["l"] - self.margin["r"]
        return (
            self.margin["l"] + (x - x0) / (x1 - x0) * plot_width,
            self.margin["t"] + (y1 - y) / (y1 - y0) * self.plot_height,
        )

    def inside(self, box: Box) -> bool:
        m = self.margin
        return (
            box[0] >= m["l"] and box[2] <= self.width - m["r"] and box[1] >= m["t"] and box[3] <= self.height - m["b"]
        )


Box = tuple[float, float, float, float]  # left, top, right, bottom in pixels


def label_size(text: str) -> tuple[float, float]:
    """A generous estimate of a label's box: 0.7 em a character (wider than Helvetica's digits and α),
    1.5 em high, with 3 px to spare on each side."""
    return 0.7 * LABEL_FONT * len(text) + 6, 1.5 * LABEL_FONT + 6


def _overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _obstacles(points: list[Point], area: Area) -> list[Box]:
    """Every marker's box and every CI bar with its end caps (CAP px either side of its line, and 1 to spare)."""
    out = []
    for p in points:
        cx, cy = area.px(p.x, p.y)
        (left, low), (right, high) = area.px(p.x_lo, p.y_lo), area.px(p.x_hi, p.y_hi)
        out += [
            (cx - MARKER_HALF, cy - MARKER_HALF, cx + MARKER_HALF, cy + MARKER_HALF),
            (left - 1, cy - CAP - 1, right + 1, cy + CAP + 1),
            (cx - CAP - 1, high - 1, cx + CAP + 1, low + 1),
        ]
    return out


def place_labels(points: list[Point], area: Area) -> list[tuple[float, float] | None]:
    """Per point, its label's centre as a pixel offset from the point, or None when no candidate
    place is free. Greedy: the most crowded points choose first, each the nearest free place."""
    blocked = _obstacles(points, area)
    centres = [area.px(p.x, p.y) for p in points]
    crowd = [sum(math.dist(c, o) < 80 for o in centres) for c in centres]
    offsets: list[tuple[float, float] | None] = [None] * len(points)
    for i in sorted(range(len(points)), key=lambda i: (-crowd[i], i)):
        (cx, cy), (w, h) = centres[i], label_size(points[i].text)
        for r in RADII:
            for angle in ANGLES:
                dx = math.cos(math.radians(angle)) * (r + MARKER_HALF + w / 2)
                dy = -math.sin(math.radians(angle)) * (r + MARKER_HALF + h / 2)
                box = (cx + dx - w / 2, cy + dy - h / 2, cx + dx + w / 2, cy + dy + h / 2)
                if area.inside(box) and not any(_overlaps(box, b) for b in blocked):
                    offsets[i] = (dx, dy)
                    blocked.append(box)
                    break
            if offsets[i]:
                break
    return offsets


def label_annotations(points: list[Point], area: Area) -> list[dict]:
    """Each placed label as an annotation at its point, its box centred at the offset (ax, ay in
    pixels), with a thin leader line from the box to the point."""
    out = []
    for p, offset in zip(points, place_labels(points, area), strict=True):
        if offset is None:
            continue  # no free place: the point's hover still names it
        out.append(
            dict(
                x=p.x,
                y=p.y,
                xref="x",
                yref="y",
                text=p.text,
                showarrow=True,
                ax=offset[0],
                ay=offset[1],
                axref="pixel",
                ayref="pixel",
                xanchor="center",
                yanchor="middle",
                arrowhead=0,
                arrowwidth=0.8,
                arrowcolor="rgba(80,80,80,0.6)",
                standoff=MARKER_HALF,
                font=dict(size=LABEL_FONT, color="#222222"),
            )
        )
    return out
