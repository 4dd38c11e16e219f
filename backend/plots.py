"""Publication-style Plotly figures from analysis tables, shared by the dashboard and exports.

One colour-blind-safe palette (Okabe-Ito), fixed per outcome class everywhere.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import polars as pl

from backend.analysis.frame import CLASSES

COLORS = {
    "correct": "#009E73",
    "optimization_failure": "#E69F00",
    "correctness_failure": "#D55E00",
    "format_failure": "#999999",
}
NAMES = {
    "correct": "correct",
    "optimization_failure": "optimization failure (TLE/MLE)",
    "correctness_failure": "correctness failure (WA/RE/OLE)",
    "format_failure": "format failure (no runnable program: none, truncated, CE)",
}
MARKERS = {"endpoint": "diamond", "interpolated": "circle", "extrapolated": "circle-open", "independent": "x"}
LAYOUT = dict(
    template="simple_white",
    font=dict(family="Helvetica, Arial, sans-serif", size=14),
    margin=dict(l=60, r=20, t=50, b=50),
)


def _shade_interpolation(fig: go.Figure) -> None:
    fig.add_vrect(x0=0, x1=1, fillcolor="#56B4E9", opacity=0.12, line_width=0)
    # the label sits above the plotting area, where it cannot cover the data
    fig.add_annotation(x=0.5, xref="x", y=1.0, yref="paper", yanchor="bottom", text="interpolation", showarrow=False,
                       font=dict(size=12, color="#2a7ab0"))  # fmt: skip
    for x in (0, 1):
        fig.add_vline(x=x, line_dash="dot", line_color="#555555")


def outcome_fractions(table: pl.DataFrame, title: str = "How samples fail as α moves") -> go.Figure:
    """Stacked outcome fractions against α (merged points only)."""
    t = table.filter(pl.col("alpha").is_not_null()).sort("alpha")
    fig = go.Figure()
    for cls in CLASSES:
        fig.add_trace(go.Scatter(x=t["alpha"], y=t[cls], name=NAMES[cls], stackgroup="one", mode="lines+markers",
                                 line=dict(color=COLORS[cls]), hovertemplate="α=%{x}<br>%{y:.1%}<extra>" + NAMES[cls] + "</extra>"))  # fmt: skip
    _shade_interpolation(fig)
    fig.update_yaxes(range=[0, 1.0])
    fig.update_layout(title=title, xaxis_title="α  (θ_α = α·θ_high + (1−α)·θ_low)", yaxis_title="fraction of samples",
                      yaxis_tickformat=".0%", legend=dict(orientation="h", y=-0.25), **LAYOUT)  # fmt: skip
    return fig


MAX_ALL_LABELS = 7  # with more points, only the endpoints and the extremes carry a visible α


def alpha_labels(alphas: list[float]) -> list[str]:
    """Visible α labels: all of them when few, else the endpoints (0, 1) and the extremes."""
    if len(alphas) <= MAX_ALL_LABELS:
        return [f"α={a:g}" for a in alphas]
    keep = {0.0, 1.0, min(alphas), max(alphas)}
    return [f"α={a:g}" if a in keep else "" for a in alphas]


def fitted_ranges(xs: list[float], ys: list[float], margin: float = 0.12) -> tuple[list[float], list[float]]:
    """Axis ranges fitted to the points with a margin, both of the same span, so that one point of
    correctness failures is as long as one of optimization failures (the trade-off's slope reads
    true); never below 0."""
    span = max(max(xs) - min(xs), max(ys) - min(ys), 0.02) * (1 + 2 * margin)

    def around(values):
        mid = (max(values) + min(values)) / 2
        lo = max(0.0, mid - span / 2)
        return [lo, lo + span]

    return around(xs), around(ys)


def failure_scatter(table: pl.DataFrame) -> go.Figure:
    """Optimization failures against correctness failures, α as colour (every α on hover);
    independently trained checkpoints with their own marker."""
    fig = go.Figure()
    merged = table.filter(pl.col("alpha").is_not_null()).sort("alpha")
    if len(merged):
        alphas = merged["alpha"].to_list()
        fig.add_trace(go.Scatter(
            x=merged["correctness_failure"], y=merged["optimization_failure"], mode="markers+text+lines",
            text=alpha_labels(alphas), textposition="top center", name="merged (α)", customdata=alphas,
            hovertemplate="α=%{customdata:g}<br>correctness failures %{x:.1%}<br>optimization failures %{y:.1%}<extra></extra>",
            marker=dict(size=12, color=merged["alpha"], colorscale="Viridis", showscale=True,
                        colorbar=dict(title="α", x=1.02, xanchor="left", y=0.5, len=1.0),
                        symbol=[MARKERS[k] for k in merged["point_kind"]], line=dict(width=1, color="#333")),
            line=dict(color="#bbbbbb", width=1),
        ))  # fmt: skip
    indep = table.filter(pl.col("alpha").is_null())
    if len(indep):
        fig.add_trace(go.Scatter(x=indep["correctness_failure"], y=indep["optimization_failure"], mode="markers+text",
                                 text=indep["label"], textposition="bottom center", name="independently trained",
                                 marker=dict(size=13, symbol="x", color="#CC79A7")))  # fmt: skip
    if len(table):
        xr, yr = fitted_ranges(table["correctness_failure"].to_list(), table["optimization_failure"].to_list())
        fig.update_xaxes(range=xr)
        fig.update_yaxes(range=yr, scaleanchor="x", scaleratio=1)
    fig.update_layout(title="The correctness–efficiency frontier", xaxis_title="correctness failures (fraction of samples)",
                      yaxis_title="optimization failures (fraction of samples)", xaxis_tickformat=".0%", yaxis_tickformat=".0%",
                      legend=dict(orientation="h", x=0, y=-0.22, yanchor="top"), **LAYOUT)  # fmt: skip
    return fig


def solve_rate(table: pl.DataFrame) -> go.Figure:
    t = table.filter(pl.col("alpha").is_not_null()).sort("alpha")
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=list(t["alpha"]) + list(t["alpha"])[::-1], y=list(t["solve_rate_hi"]) + list(t["solve_rate_lo"])[::-1],
                             fill="toself", fillcolor="rgba(0,158,115,0.18)", line=dict(width=0), name="95% CI", hoverinfo="skip"))  # fmt: skip
    fig.add_trace(
        go.Scatter(
            x=t["alpha"],
            y=t["solve_rate"],
            mode="lines+markers",
            name="solve rate (pass@1)",
            line=dict(color=COLORS["correct"]),
        )
    )
    _shade_interpolation(fig)
    fig.update_yaxes(range=[0, max([0.05, *t["solve_rate_hi"].to_list()]) * 1.15])
    fig.update_layout(title="Solve rate along α (bootstrap 95% CI over problems)", xaxis_title="α", yaxis_title="pass@1",
                      yaxis_tickformat=".0%", **LAYOUT)  # fmt: skip
    return fig


def churn_heatmap(
    rates: np.ndarray, problems: list[str], titles: list[str], labels: list[str], correct: np.ndarray, n: np.ndarray
) -> go.Figure:
    """Problems × checkpoints solve rate, drawn as a grid of square markers: unlike a Heatmap
    trace, a Scatter reports clicked points, which is how a cell opens the problem drill-down."""
    P, C = rates.shape
    xs = [labels[c] for _ in range(P) for c in range(C)]
    ys = [problems[p] for p in range(P) for _ in range(C)]
    hover = [f"{titles[p]}<br>{labels[c]}: {correct[p, c]}/{n[p, c]} correct" for p in range(P) for c in range(C)]
    height = max(400, 22 * P + 160)
    size = max(6, min(40, int(min((height - 160) / max(P, 1), 700 / max(C, 1)) * 0.9)))
    fig = go.Figure(go.Scatter(
        x=xs, y=ys, mode="markers", text=hover, hovertemplate="%{text}<extra></extra>",
        marker=dict(symbol="square", size=size, color=np.nan_to_num(rates, nan=0.0).ravel(), colorscale="Viridis",
                    cmin=0, cmax=1, colorbar=dict(title="solve rate"), line=dict(width=0)),
    ))  # fmt: skip
    # every column labelled, along the top: the grid is taller than a screen, its bottom axis out of sight
    fig.update_layout(title="Per-problem solve rate along α (click a cell to open the problem)",
                      yaxis=dict(autorange="reversed", type="category"),
                      xaxis=dict(type="category", side="top", tickangle=-45, dtick=1), height=height,
                      **{**LAYOUT, "margin": dict(l=60, r=20, t=150, b=30)})  # fmt: skip
    return fig


def passk_curves(curves: pl.DataFrame) -> go.Figure:
    fig = go.Figure()
    for label in curves["label"].unique(maintain_order=True):
        c = curves.filter(pl.col("label") == label)
        fig.add_trace(go.Scatter(x=c["k"], y=c["pass_at_k"], mode="lines", name=str(label)))
    top = int(curves["k"].max()) if len(curves) else 1
    ticks = [k for k in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000) if k <= top] or [1]
    fig.update_layout(title="pass@k (unbiased estimator, mean over problems)", xaxis_title="k", yaxis_title="pass@k",
                      xaxis=dict(type="log", tickvals=ticks, ticktext=[str(k) for k in ticks]),  # whole k only
                      yaxis=dict(tickformat=".0%", range=[0, 1.02]), **LAYOUT)  # fmt: skip
    return fig


def training_curves(metrics: pl.DataFrame) -> dict[str, go.Figure]:
    """RL training metrics (step, name, value) as figures: reward, outcome classes, pass rate per
    R_k, KL and completion length. Metrics a run did not log are left out."""
    wide = metrics.pivot(on="name", index="step", values="value", aggregate_function="last").sort("step")
    figures = {}

    def lines(key: str, title: str, columns: dict[str, str], colors: dict[str, str] | None = None, pct=False, y=""):
        present = {c: n for c, n in columns.items() if c in wide.columns}
        if not present:
            return
        fig = go.Figure()
        for column, name in present.items():
            color = (colors or {}).get(column)
            fig.add_trace(go.Scatter(x=wide["step"], y=wide[column], mode="lines+markers", name=name,
                                     line=dict(color=color) if color else None, marker=dict(size=4)))  # fmt: skip
        fig.update_layout(title=title, xaxis_title="step", yaxis_title=y, **LAYOUT)
        if pct:
            fig.update_layout(yaxis_tickformat=".0%", yaxis_range=[0, 1])
        figures[key] = fig

    lines("reward", "Mean reward per step", {"reward_mean": "reward (sandbox)"}, y="mean reward")
    lines("outcomes", "Outcome classes of the step's completions", {f"frac_{c}": NAMES[c] for c in CLASSES},
          {f"frac_{c}": COLORS[c] for c in CLASSES}, pct=True, y="fraction of completions")  # fmt: skip
    tiers = {c: c.removeprefix("pass_") for c in wide.columns if c.startswith("pass_R_")}
    lines("pass_per_tier", "Pass rate per R_k (tests with input < 10^k characters; 100% when a problem has none)",
          tiers, pct=True, y="completions passing R_k")  # fmt: skip
    lines("kl", "KL to the reference policy", {"kl": "KL"}, y="KL (nats)")
    lines("length", "Completion length (tokens)", {"completions/mean_length": "mean", "completions/max_length": "max"},
          y="tokens")  # fmt: skip
    return figures


STYLE_NAMES = {"brute": "brute-force-style", "reference": "reference-style", "buggy": "buggy-fast-style",
               "other": "like no SFT program", "no program": "no program"}  # fmt: skip
STYLE_COLORS = {
    "brute": "#E69F00",
    "reference": "#009E73",
    "buggy": "#D55E00",
    "other": "#999999",
    "no program": "#CCCCCC",
}


def style_shares(frame: pl.DataFrame, title: str = "Which SFT program each sample resembles, along α") -> go.Figure:
    """Share of samples per program style at each α (backend/lab/styles.py)."""
    fig = go.Figure()
    for style, name in STYLE_NAMES.items():
        part = frame.filter(pl.col("style") == style)
        fig.add_trace(go.Scatter(x=part["alpha"], y=part["share"], mode="lines+markers", name=name,
                                 line={"color": STYLE_COLORS[style]}))  # fmt: skip
    fig.add_vrect(x0=0, x1=1, fillcolor="#000000", opacity=0.04, line_width=0)
    fig.update_layout(title=title, xaxis_title="α", yaxis_title="share of samples", yaxis_tickformat=".0%",
                      yaxis_range=[0, 1.02], legend={"orientation": "h", "y": -0.25}, template="plotly_white")  # fmt: skip
    return fig
