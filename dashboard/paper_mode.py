"""Paper mode: a page's figure as it goes into a two-column paper. No title (the caption says what
it is, and the provenance travels in the export's manifest), no experiment ids, fonts sized for a
figure 3.3 inches wide, legend entries only for what is drawn, the pages' colour-blind-safe
palette (Okabe-Ito, Viridis), and vector formats first."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import plotly.graph_objects as go

if TYPE_CHECKING:
    import numpy as np

WIDTH_IN = 3.3  # one column of a two-column paper
PX_PER_IN = 96  # kaleido lays a figure out in CSS pixels, 96 to the inch (its PDF page is width/96 in wide)
FONT_PX = 10  # 7.5 pt: a two-column figure's small text at print size
FORMATS = ("pdf", "svg", "png")  # vector first; the PNG at 300 dpi
PNG_SCALE = 300 / PX_PER_IN
ROW_PX = 19  # a legend row at FONT_PX
_PARENTHESES = re.compile(r"\s*\([^()]*\)")  # "(exp-id)", "(TLE/MLE)": detail a caption carries


def paper_figure(fig: go.Figure) -> go.Figure:
    """A copy of `fig` for print: see the module's docstring. Each panel keeps its own title (the
    outcome panels name their class there); the churn grid gets a layout of its own (churn_for_print)."""
    if is_churn_grid(fig):
        return churn_for_print(fig)
    out = go.Figure(fig)
    drawn = [t for t in out.data if t.visible in (None, True)]  # a legend-only trace is not drawn
    out = go.Figure(data=drawn, layout=out.layout)
    for trace in out.data:
        if trace.name:
            trace.name = _short(trace.name)
    panels = 2 if any(a.startswith("xaxis2") for a in out.layout.to_plotly_json()) else 1
    height_in = 3.0 if panels > 1 else 2.4
    out.update_layout(
        title=None,
        width=round(WIDTH_IN * PX_PER_IN),
        height=round(height_in * PX_PER_IN),
        font=dict(size=FONT_PX, family="Helvetica, Arial, sans-serif"),
        margin=dict(l=46, r=8, t=22 if panels > 1 else 14, b=36),
        legend=dict(
            orientation="h",
            x=0,
            y=-0.3,
            yanchor="top",
            font=dict(size=FONT_PX - 1),
            tracegroupgap=0,
            itemwidth=30,
            title=dict(side="top", font=dict(size=FONT_PX - 1)),
        ),
    )
    if any(getattr(t.marker, "showscale", False) for t in out.data if hasattr(t, "marker")):
        _scatter_for_print(out)
    out.update_annotations(font_size=FONT_PX)
    out.update_xaxes(title_font_size=FONT_PX, tickfont_size=FONT_PX - 1, title_standoff=2)
    out.update_yaxes(title_font_size=FONT_PX, tickfont_size=FONT_PX - 1, title_standoff=2)
    for a in out.layout.annotations:  # the extrapolation label moves into the caption
        if a.text and a.text.startswith("shaded:"):
            a.visible = False
    if out.layout.xaxis and out.layout.xaxis.side == "top":  # the churn grid: its labels need the room
        out.update_layout(margin_t=60)
    _legend_room(out)
    return out


PAPER_ROWS = 20  # the churn grid's rows at a column's width: each one labelled, 12 px high
ROW_CHARS = 16  # a row label's characters at most (the rest is an ellipsis)


def is_churn_grid(fig: go.Figure) -> bool:
    """The Churn page's grid: square markers in a problems × checkpoints grid, its labels along the top."""
    return bool(
        fig.layout.xaxis.side == "top"
        and fig.data
        and getattr(fig.data[0], "marker", None) is not None
        and fig.data[0].marker.symbol == "square"
    )


def churn_for_print(fig: go.Figure) -> go.Figure:
    """The churn grid at 3.3 in: the PAPER_ROWS problems whose solve rate swings most along α (in the
    page's row order), every row labelled by its short name, every column by its α unrotated along
    the bottom (the page's "α=0.25" becomes "0.25" under an axis titled α), the colour bar flat
    beneath. At a column's width the page's 40 rows left 8 labelled and ten rotated α labels overlapped."""
    import numpy as np

    trace = fig.data[0]
    columns = list(dict.fromkeys(trace.x))
    rows = list(dict.fromkeys(trace.y))
    grid = _numbers(trace.marker.color).reshape(len(rows), len(columns))
    swing = grid.max(axis=1) - grid.min(axis=1)
    keep = sorted(np.argsort(-swing, kind="stable")[:PAPER_ROWS])
    names = [_row_name(rows[i]) for i in keep]
    ticks = [c.removeprefix("α=").replace("-", "−") for c in columns]
    height = 12 * len(keep) + 90
    out = go.Figure(
        go.Heatmap(
            z=grid[keep],
            x=ticks,
            y=names,
            zmin=0,
            zmax=1,
            colorscale="Viridis",
            xgap=1,
            ygap=1,
            colorbar=dict(
                orientation="h",
                thickness=6,
                len=0.6,
                x=1,
                xanchor="right",
                y=-40 / (12 * len(keep) + 34),
                yanchor="top",
                title=dict(text="solve rate", side="top", font_size=FONT_PX - 1),
                tickfont_size=FONT_PX - 2,
                tickvals=[0, 0.5, 1],
            ),
        )
    )
    shown = (
        f"the {len(keep)} of {len(rows)} problems whose solve rate moves most along α" if len(keep) < len(rows) else ""
    )
    out.update_layout(
        template="simple_white",
        width=round(WIDTH_IN * PX_PER_IN),
        height=height,
        font=dict(size=FONT_PX, family="Helvetica, Arial, sans-serif"),
        margin=dict(l=8, r=6, t=6, b=50),
        meta={**(fig.layout.meta or {}), "note": f"rows: {shown}" if shown else "rows: every problem"},
    )
    out.update_xaxes(type="category", side="bottom", tickangle=0, tickfont_size=FONT_PX - 2, title_text="α",
                     title_font_size=FONT_PX, title_standoff=2, ticks="", automargin=True)  # fmt: skip
    out.update_yaxes(type="category", autorange="reversed", dtick=1, tickfont_size=FONT_PX - 2, ticks="",
                     automargin=True)  # fmt: skip
    return out


def _numbers(values) -> np.ndarray:
    """A trace's numbers as floats, from a list or an array, or from the base64 form plotly gives a
    numpy array in JSON ({"dtype", "bdata", "shape"}), which a figure read back with
    pio.from_json keeps: the page's export buttons render a figure from its JSON."""
    import base64

    import numpy as np

    if isinstance(values, dict) and "bdata" in values:
        flat = np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"])
        shape = values.get("shape")
        return (flat.reshape([int(n) for n in str(shape).split(",")]) if shape else flat).astype(float)
    return np.asarray(values, dtype=float)


def _row_name(problem: str) -> str:
    """A problem's id without its set ("lab/"), cut to ROW_CHARS characters."""
    short = problem.split("/", 1)[-1]
    return short if len(short) <= ROW_CHARS else short[: ROW_CHARS - 1] + "…"


def _scatter_for_print(fig: go.Figure) -> None:
    """The frontier scatter: square, its α colour bar kept (room on the right), its point labels left
    out (they are placed in pixels for the page's size; the colour bar and the shapes say α and kind)."""
    fig.update_layout(
        height=round(WIDTH_IN * PX_PER_IN),
        margin_r=44,
        margin_t=8,
        annotations=[a for a in fig.layout.annotations if not a.showarrow],
    )
    fig.update_traces(
        selector=lambda t: getattr(t.marker, "showscale", False),
        marker_colorbar=dict(thickness=8, x=1.02, title_font_size=FONT_PX, tickfont_size=FONT_PX - 1),
    )


def _short(name: str) -> str:
    return _PARENTHESES.sub("", name).strip() or name


def _legend_room(fig: go.Figure) -> None:
    """Room below the plot for the legend's rows (a column fits about two entries a row)."""
    names = [t.name for t in fig.data if t.showlegend is not False and t.name]
    if not fig.layout.showlegend and len(names) <= 1:
        fig.update_layout(showlegend=False)
        return
    long = sum(1 for n in names if len(n) > 24)  # a long entry takes a row of its own
    title = fig.layout.legend.title.text
    if title and " · " in title:  # the scatter's key to its shapes, on two lines
        parts = title.split(" · ")
        title = " · ".join(parts[:2]) + "<br>" + " · ".join(parts[2:])
        fig.update_layout(legend_title_text=title)
    rows = long + -(-(len(names) - long) // 2) + (title.count("<br>") + 1 if title else 0)
    fig.update_layout(margin_b=44 + ROW_PX * rows, height=fig.layout.height + ROW_PX * rows)
    fig.update_layout(legend_y=-36 / _plot_px(fig))


def _plot_px(fig: go.Figure) -> float:
    """The plot area's height in pixels: a legend placed in pixels below it clears the axis title."""
    return fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
