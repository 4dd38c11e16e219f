"""Publication-style Plotly figures from analysis tables, shared by the dashboard and exports.

One colour-blind-safe palette (Okabe-Ito), fixed per outcome class everywhere.
"""

from __future__ import annotations

import textwrap

import numpy as np
import plotly.graph_objects as go
import polars as pl
from plotly.subplots import make_subplots

from backend.alpha import alpha_text
from backend.analysis.frame import CLASSES
from backend.outcomes import OutcomeClass

COLORS = {
    OutcomeClass.CORRECT: "#009E73",
    OutcomeClass.OPTIMIZATION_FAILURE: "#E69F00",
    OutcomeClass.CORRECTNESS_FAILURE: "#D55E00",
    OutcomeClass.FORMAT_FAILURE: "#999999",
}
NAMES = {
    OutcomeClass.CORRECT: "correct",
    OutcomeClass.OPTIMIZATION_FAILURE: "optimization failure (TLE/MLE)",
    OutcomeClass.CORRECTNESS_FAILURE: "correctness failure (WA/RE/OLE)",
    OutcomeClass.FORMAT_FAILURE: "format failure (no runnable program: none, truncated, CE)",
}
SOLVE_RATE = "Solve rate: a problem's share of correct samples (pass@1), averaged over problems."
MAX_BANDS = 3  # CI bands drawn at once on pass@k; the others on demand (click their legend entry)
LAYOUT = dict(
    template="simple_white",
    font=dict(family="Helvetica, Arial, sans-serif", size=14),
    margin=dict(l=60, r=20, t=50, b=50),
)


def _shade_interpolation(fig: go.Figure, col: int | None = None, shade: bool = True) -> None:
    """The interpolation region [0, 1]: dotted lines at its ends, shaded under the traces unless
    `shade` is off (a tint over a stacked plot's fills would change the outcome colours under it)."""
    where = dict(row=1, col=col) if col else {}
    if shade:
        fig.add_vrect(x0=0, x1=1, fillcolor="#56B4E9", opacity=0.12, line_width=0, layer="below", **where)
    if col is None:  # the label sits above the plotting area, where it cannot cover the data
        fig.add_annotation(x=0.5, xref="x", y=1.0, yref="paper", yanchor="bottom", text="interpolation", showarrow=False,
                           font=dict(size=12, color="#2a7ab0"))  # fmt: skip
    for x in (0, 1):
        fig.add_vline(x=x, line_dash="dot", line_color="#555555", **where)


EXPERIMENT_COLORS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"]
Tables = pl.DataFrame | dict[str, pl.DataFrame]  # one experiment's frontier table, or several by label


def _series(tables: Tables) -> dict[str, pl.DataFrame]:
    return tables if isinstance(tables, dict) else {"": tables}


def _wrap(label: str, width: int = 48) -> str:
    """A subplot's title on lines of its own width, so side-by-side titles do not print over each other."""
    return "<br>".join(textwrap.wrap(label, width)) or label


def _titled(title: str, experiment: str | None) -> str:
    """Every figure says which experiment it shows (an export leaves the page that said so)."""
    return f"{title}<br><sup>{experiment}</sup>" if experiment else title


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
    tables: Tables, title: str = "How samples fail as α moves", experiment: str | None = None
) -> go.Figure:
    """Stacked outcome fractions against α (merged points only); several experiments side by side."""
    series = _series(tables)
    # one experiment's name is already the title's second line: a panel title would sit on top of it
    names = [_wrap(k, max(24, 96 // len(series))) for k in series if k] if len(series) > 1 else []
    fig = make_subplots(
        rows=1, cols=len(series), shared_yaxes=True, subplot_titles=names or None, horizontal_spacing=0.04
    )
    for col, t in enumerate(series.values(), start=1):
        t = t.filter(pl.col("alpha").is_not_null()).sort("alpha")
        hover = "n_samples" in t.columns  # frontier tables carry n and CIs; hand-made ones may not
        for cls in CLASSES:
            template = "α=%{customdata[0]}<br>%{y:.1%}" + HOVER_CI if hover else "α=%{x}<br>%{y:.1%}"
            fig.add_trace(go.Scatter(x=t["alpha"], y=t[cls], name=NAMES[cls], stackgroup=f"s{col}", mode="lines+markers",
                                     line=dict(color=COLORS[cls]), legendgroup=cls, showlegend=col == 1,
                                     customdata=_hover_data(t, cls) if hover else None,
                                     hovertemplate=template + "<extra>" + NAMES[cls] + "</extra>"), row=1, col=col)  # fmt: skip
        _shade_interpolation(fig, col, shade=False)
    fig.update_yaxes(range=[0, 1.0], tickformat=".0%")
    fig.update_yaxes(title_text="fraction of samples", row=1, col=1)
    fig.update_xaxes(title_text="α  (θ_α = α·θ_high + (1−α)·θ_low)" if len(series) == 1 else "α")
    fig.update_layout(title=_titled(title, experiment), legend=dict(orientation="h", y=-0.25), **LAYOUT)
    if len(series) > 1:  # room for the experiments' names above their panels
        fig.update_annotations(font_size=12)
        fig.update_layout(margin={**LAYOUT["margin"], "t": 130})
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
    fig, top = go.Figure(), [0.05]
    for i, (name, table) in enumerate(series.items()):
        t = table.filter(pl.col("alpha").is_not_null()).sort("alpha")
        color = COLORS["correct"] if len(series) == 1 else EXPERIMENT_COLORS[i % len(EXPERIMENT_COLORS)]
        fig.add_trace(go.Scatter(x=list(t["alpha"]) + list(t["alpha"])[::-1], y=list(t["solve_rate_hi"]) + list(t["solve_rate_lo"])[::-1],
                                 mode="lines", fill="toself", fillcolor=_rgba(color, 0.18), line=dict(width=0), hoverinfo="skip",
                                 name=f"{name}: 95% CI" if name else "95% CI", legendgroup=name))  # fmt: skip
        fig.add_trace(go.Scatter(x=t["alpha"], y=t["solve_rate"], mode="lines+markers", legendgroup=name,
                                 name=name or "solve rate", line=dict(color=color),
                                 customdata=_hover_data(t, "solve_rate") if "n_samples" in t.columns else None,
                                 hovertemplate=(f"{name}<br>" if name else "") + "α=%{customdata[0]}<br>solve rate %{y:.1%}" + HOVER_CI
                                 + "<extra></extra>" if "n_samples" in t.columns else None))  # fmt: skip
        top += t["solve_rate_hi"].to_list()
    _shade_interpolation(fig)
    fig.update_yaxes(range=[0, min(1.0, max(top) * 1.15)])
    title = _titled("Solve rate along α (bootstrap 95% CI over problems)", experiment) + f"<br><sup>{SOLVE_RATE}</sup>"
    fig.update_layout(title=title, xaxis_title="α", yaxis_title="solve rate (pass@1)", yaxis_tickformat=".0%",
                      legend=dict(orientation="h", y=-0.25), **{**LAYOUT, "margin": {**LAYOUT["margin"], "t": 120}})  # fmt: skip
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
    fig = go.Figure(go.Scatter(
        x=xs, y=ys, mode="markers", text=hover, hovertemplate="%{text}<extra></extra>",
        marker=dict(symbol="square", size=size, color=np.nan_to_num(rates, nan=0.0).ravel(), colorscale="Viridis",
                    cmin=0, cmax=1, colorbar=dict(title="solve rate"), line=dict(width=0)),
    ))  # fmt: skip
    # every column labelled, along the top: the grid is taller than a screen, its bottom axis out of sight
    fig.update_layout(title=_titled("Per-problem solve rate along α (click a cell to open the problem)", experiment),
                      yaxis=dict(autorange="reversed", type="category"),
                      xaxis=dict(type="category", side="top", tickangle=-45, dtick=1), height=height,
                      **{**LAYOUT, "margin": dict(l=60, r=20, t=150, b=30)})  # fmt: skip
    return fig


DASHES = ["solid", "dash", "dot", "dashdot", "longdash", "longdashdot"]


def passk_figure(curves: pl.DataFrame, experiment: str | None = None) -> go.Figure:
    """Mean pass@k against k (log axis) per curve (label), with its 95% CI band where the table
    has lo/hi. With an `experiment` column holding several experiments, each experiment has its
    own colour and each pool its own dash, so pools of different experiments overlay. The y axis
    is fitted to the curves and their bands (inside [0, 1])."""
    fig, values, bands = go.Figure(), [], 0
    by_exp = "experiment" in curves.columns and curves["experiment"].n_unique() > 1
    names = curves["label"].unique(maintain_order=True).to_list() if len(curves) else []
    exps = curves["experiment"].unique(maintain_order=True).to_list() if by_exp else [None]
    for e_i, exp in enumerate(exps):
        for l_i, label in enumerate(names):
            c = curves.filter(pl.col("label") == label)
            c = c.filter(pl.col("experiment") == exp) if by_exp else c
            if not len(c):
                continue
            color = EXPERIMENT_COLORS[(e_i if by_exp else l_i) % len(EXPERIMENT_COLORS)]
            name = f"{exp}: {label}" if by_exp else str(label)
            band = "lo" in c.columns and c["lo"].null_count() == 0
            if band:  # past MAX_BANDS a band waits in the legend: six overlapping ones were unreadable
                shown = (bands := bands + 1) <= MAX_BANDS
                fig.add_trace(go.Scatter(x=list(c["k"]) + list(c["k"])[::-1], y=list(c["hi"]) + list(c["lo"])[::-1],
                                         mode="lines", fill="toself", fillcolor=_rgba(color, 0.15), line=dict(width=0), hoverinfo="skip",
                                         name=f"{name}: 95% CI", legendgroup=name if shown else f"{name}: band",
                                         showlegend=not shown, visible=True if shown else "legendonly"))  # fmt: skip
                values += c["lo"].to_list() + c["hi"].to_list()
            values += c["pass_at_k"].to_list()
            fig.add_trace(go.Scatter(x=c["k"], y=c["pass_at_k"], mode="lines", name=name, legendgroup=name,
                                     line=dict(color=color, dash=DASHES[l_i % len(DASHES)] if by_exp else "solid"),
                                     customdata=_passk_hover(c, band), hovertemplate=_PASSK_HOVER))  # fmt: skip
    top = int(curves["k"].max()) if len(curves) else 1
    ticks = [k for k in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000) if k <= top] or [1]
    values = [v for v in values if v is not None and v == v]
    fig.update_layout(title=_titled("pass@k (unbiased estimator, mean over problems, 95% CI bands)", experiment),
                      xaxis_title="k", yaxis_title="pass@k",
                      xaxis=dict(type="log", tickvals=ticks, ticktext=[str(k) for k in ticks]),  # whole k only
                      yaxis=dict(tickformat=".0%", range=fitted_range(values or [0.0], min_span=0.05)),
                      legend=dict(orientation="h", y=-0.2, yanchor="top"), **LAYOUT)  # fmt: skip
    return fig


_PASSK_HOVER = ("%{customdata[0]}<br>k=%{x} · pass@k %{y:.1%}<br>95% CI %{customdata[1]}"
                " · n=%{customdata[2]} problems%{customdata[3]}<extra></extra>")  # fmt: skip


def _passk_hover(c: pl.DataFrame, band: bool) -> list[list]:
    """Per point: the curve's name, its CI as text (or why none), problems, and pool size."""
    n = c["n_problems"].to_list() if "n_problems" in c.columns else ["?"] * len(c)
    members = c["members"].to_list() if "members" in c.columns else [1] * len(c)
    name = (
        [f"{e}: {lab}" for e, lab in zip(c["experiment"], c["label"], strict=True)]
        if "experiment" in c.columns
        else c["label"].to_list()
    )
    ci = [f"{lo:.1%}–{hi:.1%}" for lo, hi in zip(c["lo"], c["hi"], strict=True)] if band else ["not computed"] * len(c)
    return [
        [nm, interval, p, f" · {m} members" if m and m > 1 else ""]
        for nm, interval, p, m in zip(name, ci, n, members, strict=True)
    ]


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
