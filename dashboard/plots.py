"""Publication-style Plotly figures from analysis tables, shared by the dashboard and exports.

One colour-blind-safe palette (Okabe-Ito), fixed per outcome class everywhere.
"""

from __future__ import annotations

import re
import textwrap

import numpy as np
import plotly.graph_objects as go
import polars as pl
from plotly.subplots import make_subplots

from backend.alpha import alpha_text
from backend.outcomes import OUTCOME_CLASSES, OutcomeClass

COLORS = {
    OutcomeClass.CORRECT: "#009E73",
    OutcomeClass.OPTIMIZATION_FAILURE: "#E69F00",
    OutcomeClass.CORRECTNESS_FAILURE: "#D55E00",
    OutcomeClass.FORMAT_FAILURE: "#999999",
}
NAMES = {
    OutcomeClass.CORRECT: OutcomeClass.CORRECT.value,  # its name says it
    OutcomeClass.OPTIMIZATION_FAILURE: "optimization failure (TLE/MLE)",
    OutcomeClass.CORRECTNESS_FAILURE: "correctness failure (WA/RE/OLE)",
    OutcomeClass.FORMAT_FAILURE: "format failure (no runnable program: none, truncated, CE)",
}
SOLVE_RATE = "Solve rate: a problem's share of correct samples (pass@1), averaged over problems."
LAYOUT = dict(
    template="simple_white",
    font=dict(family="Helvetica, Arial, sans-serif", size=14),
    margin=dict(l=60, r=20, t=50, b=50),
)


ENDPOINT_LINE = dict(color="#555555", width=1.2, dash="dot")  # simple_white's default vline width is 0
EXTRAPOLATED = dict(fillcolor="#000000", opacity=0.07, line=dict(width=0), layer="below")


def mark_alpha_axis(
    fig: go.Figure, alphas: list[float], row: int | None = None, col: int | None = None, label: bool = True
) -> None:
    """The structure of an α axis: a dotted line at each endpoint (α = 0 and α = 1) and a grey shade
    over the extrapolated region (α < 0 and α > 1), under the traces so no colour changes over it.
    The shapes are what add_vline/add_vrect make, added in one assignment: those two validate and
    place each shape one by one, 0.2 s for a four-panel chart, a tenth of a fresh server's first page."""
    x, y = _axis_refs(fig, row, col)
    span = dict(xref=x, yref=f"{y} domain", y0=0, y1=1)
    alphas = [a for a in alphas if a is not None and a == a]
    lo, hi = min([0.0, *alphas]), max([1.0, *alphas])
    shades = [dict(type="rect", x0=x0, x1=x1, **span, **EXTRAPOLATED) for x0, x1 in ((lo, 0.0), (1.0, hi)) if x1 > x0]
    lines = [dict(type="line", x0=v, x1=v, **span, line=ENDPOINT_LINE) for v in (0, 1)]
    fig.layout.shapes = (*fig.layout.shapes, *shades, *lines)
    if label and (lo < 0 or hi > 1):  # above the plotting area, where it cannot cover the data
        fig.add_annotation(
            x=hi if hi > 1 else lo,
            xref="x",
            y=1.0,
            yref="paper",
            yanchor="bottom",
            xanchor="right" if hi > 1 else "left",
            text="shaded: extrapolation",
            showarrow=False,
            font=dict(size=11, color="#555555"),
        )


EXPERIMENT_COLORS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"]
Tables = pl.DataFrame | dict[str, pl.DataFrame]  # one experiment's frontier table, or several by label


def _axis_refs(fig: go.Figure, row: int | None, col: int | None) -> tuple[str, str]:
    """("x2", "y2"): the axes a shape refers to, for a subplot of a grid or (no row) the only ones."""
    if not row:
        return "x", "y"
    panel = fig.get_subplot(row, col)
    return (panel.xaxis.plotly_name.replace("axis", ""), panel.yaxis.plotly_name.replace("axis", ""))


def _series(tables: Tables) -> dict[str, pl.DataFrame]:
    return tables if isinstance(tables, dict) else {"": tables}


def _wrap(label: str, width: int = 48) -> str:
    """A subplot's title on lines of its own width, so side-by-side titles do not print over each other."""
    return "<br>".join(textwrap.wrap(label, width)) or label


def _titled(title: str, experiment: str | None) -> str:
    """Every figure says which experiment it shows (an export leaves the page that said so)."""
    return f"{title}<br><sup>{experiment}</sup>" if experiment else title


TITLE_PX, SUBTITLE_PX = 20, 12  # the title block's fonts: a title, then its subtitle's lines
EXPORT_WIDTH = 1000  # px: an export of a figure without a width of its own (dashboard/exports.py)
TITLE_INDENT = 14  # px from the figure's left edge
CHAR_EM = 0.6  # a generous average width of a character, in em (Helvetica's is about 0.5)
_TAGS = re.compile(r"</?sup>")


def title_lines(fig: go.Figure) -> tuple[str, list[str]]:
    """A figure's title and the lines under it (the experiment, a definition), however it was written:
    the lines after its first <br> (each a <sup>) and its subtitle's lines."""
    title = fig.layout.title
    main, *rest = (title.text or "").split("<br>")
    rest += [line for line in ((title.subtitle.text or "") if title.subtitle else "").split("<br>") if line]
    return main, [_TAGS.sub("", line) for line in rest]


def with_provenance(fig: go.Figure, prov, experiment: bool = True) -> go.Figure:
    """The figure with its provenance (backend/analysis/provenance.py, dated today) in its subtitle,
    after the experiment's name (`experiment`: unless the title names it, or overlaid experiments
    name theirs in the legend), and in full in layout.meta, with its title (the JSON export, paper
    mode and the image metadata read them from there). The subtitle's lines are wrapped to the
    width the figure is drawn at, and the top margin is the title block's height: a title hung
    from the figure's top edge with <br> lines of its own was cut off at the top in every export
    (plotly.js placed its first line's baseline, not its top, at the edge)."""
    prov = prov.dated()
    main, lines = title_lines(fig)
    name = f"{prov.experiment_name} ({prov.experiment})" if prov.experiment_name else prov.experiment
    if experiment and not any(prov.experiment in line for line in lines):
        lines.insert(0, name)
    width = fig.layout.width or EXPORT_WIDTH
    chars = int((width - 2 * TITLE_INDENT) / (CHAR_EM * SUBTITLE_PX))
    wrapped = [part for line in [*lines, prov.subtitle()] for part in textwrap.wrap(line, chars)]
    top = fig.layout.margin.t if fig.layout.margin.t is not None else LAYOUT["margin"]["t"]
    block = 10 + round(1.3 * TITLE_PX) + round(1.35 * SUBTITLE_PX) * len(wrapped) + 6
    # room below the block: the panels' own titles, the churn grid's α labels along the top, or the
    # "shaded: extrapolation" note above a plot
    panels = "xaxis2" in fig.layout.to_plotly_json()
    below = 80 if fig.layout.xaxis and fig.layout.xaxis.side == "top" else 28 if panels else 18
    fig.update_layout(
        title=dict(
            text=main,
            subtitle=dict(text="<br>".join(wrapped), font=dict(size=SUBTITLE_PX)),
            font=dict(size=TITLE_PX),
            x=0,
            xref="container",
            xanchor="left",
            y=1,
            yref="container",
            yanchor="top",
            pad=dict(t=10, l=TITLE_INDENT),
        ),
        margin_t=block + below,
        meta={"provenance": prov.fields(), "title": main},
    )
    if fig.layout.height and fig.layout.width:  # a figure of its own size (the scatter's labels are placed
        fig.update_layout(height=fig.layout.height + block + below - top)  # in pixels) keeps its plot area
    return fig


def _hover_data(t: pl.DataFrame, cls: str) -> list[list]:
    """Per point: α as written, samples, and the class's 95% CI, for hovertemplates."""
    return [
        [alpha_text(a) if a is not None else lab, n, lo, hi]
        for a, lab, n, lo, hi in zip(
            t["alpha"], t["label"], t["n_samples"], t[f"{cls}_lo"], t[f"{cls}_hi"], strict=True
        )
    ]


HOVER_CI = "<br>95% CI %{customdata[2]:.1%}–%{customdata[3]:.1%} · n=%{customdata[1]} samples"


def outcome_fractions(
    tables: Tables,
    title: str = "How samples fail as α moves",
    experiment: str | None = None,
    stacked: bool = False,
) -> go.Figure:
    """Each outcome class's fraction against α (merged points only) in a panel of its own, with its
    bootstrap 95% CI as a band; several experiments share the panels, one colour each. `stacked`:
    the four fractions stacked in one panel per experiment, without CIs (shares at a glance)."""
    if stacked:
        return _stacked_fractions(tables, title, experiment)
    series = _series(tables)
    fig = make_subplots(
        rows=2,
        cols=2,
        shared_xaxes=True,
        subplot_titles=[NAMES[c].split(" (")[0] for c in OUTCOME_CLASSES],
        vertical_spacing=0.14,
        horizontal_spacing=0.1,
    )
    alphas: list[float] = []
    for i, (name, table) in enumerate(series.items()):
        t = table.filter(pl.col("alpha").is_not_null()).sort("alpha")
        alphas += t["alpha"].to_list()
        hover = "n_samples" in t.columns  # frontier tables carry n and CIs; hand-made ones may not
        for j, cls in enumerate(OUTCOME_CLASSES):
            row, col = divmod(j, 2)
            color = COLORS[cls] if len(series) == 1 else EXPERIMENT_COLORS[i % len(EXPERIMENT_COLORS)]
            label = name or NAMES[cls]
            if f"{cls}_lo" in t.columns:
                x = t["alpha"].to_list()
                fig.add_trace(
                    go.Scatter(
                        x=x + x[::-1],
                        y=t[f"{cls}_hi"].to_list() + t[f"{cls}_lo"].to_list()[::-1],
                        mode="lines",
                        fill="toself",
                        fillcolor=_rgba(color, 0.2),
                        line=dict(width=0),
                        hoverinfo="skip",
                        name=f"{label}: 95% CI",
                        legendgroup=label,
                        showlegend=False,
                    ),
                    row=row + 1,
                    col=col + 1,
                )
            template = "α=%{customdata[0]}<br>%{y:.1%}" + HOVER_CI if hover else "α=%{x}<br>%{y:.1%}"
            fig.add_trace(
                go.Scatter(
                    x=t["alpha"],
                    y=t[cls],
                    name=label,
                    mode="lines+markers",
                    legendgroup=label,
                    line=dict(color=color),
                    marker=dict(size=5),
                    showlegend=bool(name) and j == 0,
                    customdata=_hover_data(t, cls) if hover else None,
                    hovertemplate=template + "<extra>" + (f"{name}: " if name else "") + NAMES[cls] + "</extra>",
                ),
                row=row + 1,
                col=col + 1,
            )
    for j in range(4):
        mark_alpha_axis(fig, alphas, row=j // 2 + 1, col=j % 2 + 1, label=False)
    fig.update_yaxes(tickformat=".0%", rangemode="tozero")
    fig.update_yaxes(title_text="fraction of samples", col=1)
    fig.update_xaxes(title_text="α", row=2)
    fig.update_annotations(font_size=13)
    sub = "Shaded band: bootstrap 95% CI over problems; grey: extrapolation (α < 0 or α > 1)"
    fig.update_layout(
        title=_titled(title, experiment) + f"<br><sup>{sub}</sup>",
        height=620,
        legend=dict(orientation="h", y=-0.12),
        **{**LAYOUT, "margin": {**LAYOUT["margin"], "t": 110}},
    )
    return fig


def _stacked_fractions(tables: Tables, title: str, experiment: str | None) -> go.Figure:
    """The four fractions stacked (they add up to 1) in one panel per experiment."""
    series = _series(tables)
    # one experiment's name is already the title's second line: a panel title would sit on top of it
    names = [_wrap(k, max(24, 96 // len(series))) for k in series if k] if len(series) > 1 else []
    fig = make_subplots(
        rows=1, cols=len(series), shared_yaxes=True, subplot_titles=names or None, horizontal_spacing=0.04
    )
    for col, t in enumerate(series.values(), start=1):
        t = t.filter(pl.col("alpha").is_not_null()).sort("alpha")
        hover = "n_samples" in t.columns
        for cls in OUTCOME_CLASSES:
            template = "α=%{customdata[0]}<br>%{y:.1%}" + HOVER_CI if hover else "α=%{x}<br>%{y:.1%}"
            fig.add_trace(
                go.Scatter(
                    x=t["alpha"],
                    y=t[cls],
                    name=NAMES[cls],
                    stackgroup=f"s{col}",
                    mode="lines+markers",
                    line=dict(color=COLORS[cls]),
                    legendgroup=cls,
                    showlegend=col == 1,
                    customdata=_hover_data(t, cls) if hover else None,
                    hovertemplate=template + "<extra>" + NAMES[cls] + "</extra>",
                ),
                row=1,
                col=col,
            )
        mark_alpha_axis(fig, t["alpha"].to_list(), row=1, col=col, label=col == 1)
    fig.update_yaxes(range=[0, 1.0], tickformat=".0%")
    fig.update_yaxes(title_text="fraction of samples", row=1, col=1)
    fig.update_xaxes(title_text="α  (θ_α = α·θ_high + (1−α)·θ_low)" if len(series) == 1 else "α")
    sub = "Stacked fractions without CIs (the panel view draws them); grey: extrapolation"
    fig.update_layout(
        title=_titled(title, experiment) + f"<br><sup>{sub}</sup>",
        legend=dict(orientation="h", y=-0.25),
        **{**LAYOUT, "margin": {**LAYOUT["margin"], "t": 100}},
    )
    if len(series) > 1:  # room for the experiments' names above their panels
        fig.update_annotations(font_size=12)
        fig.update_layout(margin={**LAYOUT["margin"], "t": 150})
    return fig


def fitted_range(values: list[float], margin: float = 0.12, min_span: float = 0.0) -> list[float]:
    """An axis range for shares fitted to the values (CI ends included) with a margin on each
    side, inside [0, 1]: the frontier fills the plot instead of sitting in a corner of 0–100 %.
    A range narrower than min_span is widened around its middle (flat data keeps a readable axis)."""
    lo, hi = min(values), max(values)
    pad = max(hi - lo, 0.02) * margin
    lo, hi = max(0.0, lo - pad), min(1.0, hi + pad)
    if hi - lo < min_span:
        mid = min(max((lo + hi) / 2, min_span / 2), 1.0 - min_span / 2)
        lo, hi = mid - min_span / 2, mid + min_span / 2
    return [lo, hi]


def solve_rate(tables: Tables, experiment: str | None = None) -> go.Figure:
    """The solve rate along α with its bootstrap 95% band; one line and band per experiment. The
    title's last line defines it, so that an exported figure says what it shows."""
    series = _series(tables)
    fig, top, alphas = go.Figure(), [0.05], []
    for i, (name, table) in enumerate(series.items()):
        t = table.filter(pl.col("alpha").is_not_null()).sort("alpha")
        color = COLORS[OutcomeClass.CORRECT] if len(series) == 1 else EXPERIMENT_COLORS[i % len(EXPERIMENT_COLORS)]
        fig.add_trace(
            go.Scatter(
                x=list(t["alpha"]) + list(t["alpha"])[::-1],
                y=list(t["solve_rate_hi"]) + list(t["solve_rate_lo"])[::-1],
                mode="lines",
                fill="toself",
                fillcolor=_rgba(color, 0.18),
                line=dict(width=0),
                hoverinfo="skip",
                name=f"{name}: 95% CI" if name else "95% CI",
                legendgroup=name,
            )
        )
        fig.add_trace(
            go.Scatter(
                x=t["alpha"],
                y=t["solve_rate"],
                mode="lines+markers",
                legendgroup=name,
                name=name or "solve rate",
                line=dict(color=color),
                customdata=_hover_data(t, "solve_rate") if "n_samples" in t.columns else None,
                hovertemplate=(f"{name}<br>" if name else "")
                + "α=%{customdata[0]}<br>solve rate %{y:.1%}"
                + HOVER_CI
                + "<extra></extra>"
                if "n_samples" in t.columns
                else None,
            )
        )
        top += t["solve_rate_hi"].to_list()
        alphas += t["alpha"].to_list()
    mark_alpha_axis(fig, alphas)
    fig.update_yaxes(range=[0, min(1.0, max(top) * 1.15)])
    title = _titled("Solve rate along α (bootstrap 95% CI over problems)", experiment) + f"<br><sup>{SOLVE_RATE}</sup>"
    fig.update_layout(
        title=title,
        xaxis_title="α",
        yaxis_title="solve rate (pass@1)",
        yaxis_tickformat=".0%",
        legend=dict(orientation="h", y=-0.25),
        **{**LAYOUT, "margin": {**LAYOUT["margin"], "t": 120}},
    )
    return fig


def _rgba(hex_color: str, alpha: float) -> str:
    r, g, b = (int(hex_color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def churn_heatmap(
    rates: np.ndarray,
    problems: list[str],
    titles: list[str],
    labels: list[str],
    correct: np.ndarray,
    n: np.ndarray,
    experiment: str | None = None,
) -> go.Figure:
    """Problems × checkpoints solve rate, drawn as a grid of square markers: unlike a Heatmap
    trace, a Scatter reports clicked points, which is how a cell opens the problem drill-down."""
    P, C = rates.shape
    xs = [labels[c] for _ in range(P) for c in range(C)]
    ys = [problems[p] for p in range(P) for _ in range(C)]
    hover = [f"{titles[p]}<br>{labels[c]}: {correct[p, c]}/{n[p, c]} correct" for p in range(P) for c in range(C)]
    height = max(400, 22 * P + 160)
    size = max(6, min(40, int(min((height - 160) / max(P, 1), 700 / max(C, 1)) * 0.9)))
    fig = go.Figure(
        go.Scatter(
            x=xs,
            y=ys,
            mode="markers",
            text=hover,
            hovertemplate="%{text}<extra></extra>",
            marker=dict(
                symbol="square",
                size=size,
                color=np.nan_to_num(rates, nan=0.0).ravel(),
                colorscale="Viridis",
                cmin=0,
                cmax=1,
                colorbar=dict(title="solve rate"),
                line=dict(width=0),
            ),
        )
    )
    # every column labelled, along the top: the grid is taller than a screen, its bottom axis out of sight
    fig.update_layout(
        title=_titled("Per-problem solve rate along α (click a cell to open the problem)", experiment),
        yaxis=dict(autorange="reversed", type="category"),
        xaxis=dict(type="category", side="top", tickangle=-45, dtick=1),
        height=height,
        **{**LAYOUT, "margin": dict(l=60, r=20, t=150, b=30)},
    )
    return fig
