"""The pass@k figure: mean pass@k against k per pool or checkpoint, with CI bands and the per-k best single,
in dashboard/plots.py's palette and layout."""

from __future__ import annotations

import plotly.graph_objects as go
import polars as pl

from dashboard.plots import EXPERIMENT_COLORS, LAYOUT, _rgba, _titled, fitted_range

MAX_BANDS = 3  # CI bands drawn at once on the gain figure; the others on demand (click their legend entry)
DASHES = ["solid", "dash", "dot", "dashdot", "longdash", "longdashdot"]


def best_single_name(ks: list[int], checkpoints: list[str]) -> str:
    """ "best single at each k: α=1.5 at k 1–4, α=1.25 at k 5–8": which checkpoint it is, where."""
    runs: list[list] = []
    for k, c in zip(ks, checkpoints, strict=True):
        if runs and runs[-1][0] == c:
            runs[-1][2] = k
        else:
            runs.append([c, k, k])
    parts = [f"{c} at k {a}–{b}" if b > a else f"{c} at k {a}" for c, a, b in runs]
    return "best single at each k: " + ", ".join(parts)


def _band(x: list, lo: list, hi: list, color: str, **kwargs) -> go.Scatter:
    """A CI band whose edges are drawn in its curve's colour: where bands overlap, their fills mix
    into one tint, and the edges still say which band ends where."""
    return go.Scatter(
        x=x + x[::-1],
        y=hi + lo[::-1],
        mode="lines",
        fill="toself",
        fillcolor=_rgba(color, 0.1),
        line=dict(width=0.8, color=_rgba(color, 0.6), dash="dot"),
        hoverinfo="skip",
        **kwargs,
    )


def _best_single_curve(fig: go.Figure, best: pl.DataFrame) -> list[float]:
    """The per-k best single (the gain table's baseline): black, dashed, each point naming its checkpoint,
    with the gain table's 95 % CI of its held-out pass@k as a band."""
    best = best.sort("k")
    name = best_single_name(best["k"].to_list(), best["checkpoint"].to_list())
    banded = "lo" in best.columns and best["lo"].null_count() == 0
    if banded:
        fig.add_trace(
            _band(
                list(best["k"]),
                list(best["lo"]),
                list(best["hi"]),
                "#000000",
                name=f"{name}: 95% CI",
                legendgroup=name,
                showlegend=False,
            )
        )
    fig.add_trace(
        go.Scatter(
            x=best["k"],
            y=best["pass_at_k"],
            mode="lines+markers",
            name=name,
            line=dict(color="#000000", dash="dash", width=1.5),
            marker=dict(size=5),
            customdata=best["checkpoint"].to_list(),
            hovertemplate="best single at k=%{x}: %{customdata} · pass@k %{y:.1%}<extra></extra>",
        )
    )
    return best["pass_at_k"].to_list() + (best["lo"].to_list() + best["hi"].to_list() if banded else [])


def passk_figure(curves: pl.DataFrame, experiment: str | None = None, best: pl.DataFrame | None = None) -> go.Figure:
    """Mean pass@k against k (log axis) per curve (label), with its 95% CI band wherever the table
    has lo/hi: every curve, pools and the best single included (the page once drew three bands and
    kept the others in the legend, so a pool's and the best single's CIs were a click away, unseen).
    A pool's name says its size. With an `experiment` column holding several experiments, each
    experiment has its own colour and each pool its own dash, so pools of different experiments
    overlay. `best` (k, pass_at_k, lo, hi, checkpoint): the best single at each k, drawn as a curve of
    its own. The y axis is fitted to the curves and their bands (inside [0, 1])."""
    fig, values = go.Figure(), []
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
            name = (f"{exp}: {label}" if by_exp else str(label)) + pool_size(c)
            band = "lo" in c.columns and c["lo"].null_count() == 0
            if band:  # each band's edges dotted in its curve's colour: overlapping bands stay readable
                fig.add_trace(
                    _band(
                        list(c["k"]),
                        list(c["lo"]),
                        list(c["hi"]),
                        color,
                        name=f"{name}: 95% CI",
                        legendgroup=name,
                        showlegend=False,
                    )
                )
                values += c["lo"].to_list() + c["hi"].to_list()
            values += c["pass_at_k"].to_list()
            fig.add_trace(
                go.Scatter(
                    x=c["k"],
                    y=c["pass_at_k"],
                    mode="lines",
                    name=name,
                    legendgroup=name,
                    line=dict(color=color, dash=DASHES[l_i % len(DASHES)] if by_exp else "solid"),
                    customdata=_passk_hover(c, band, name),
                    hovertemplate=_PASSK_HOVER,
                )
            )
    if best is not None and len(best):
        values += _best_single_curve(fig, best)
    top = int(curves["k"].max()) if len(curves) else 1
    ticks = [k for k in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000) if k <= top] or [1]
    values = [v for v in values if v is not None and v == v]
    fig.update_layout(
        title=_titled("pass@k (unbiased estimator, mean over problems, 95% CI bands)", experiment),
        xaxis_title="k",
        yaxis_title="pass@k",
        xaxis=dict(type="log", tickvals=ticks, ticktext=[str(k) for k in ticks]),  # whole k only
        yaxis=dict(tickformat=".0%", range=fitted_range(values or [0.0], min_span=0.05)),
        legend=dict(orientation="h", y=-0.2, yanchor="top"),
        **LAYOUT,
    )
    return fig


def pool_size(curve: pl.DataFrame) -> str:
    """ ", 7 checkpoints" after a pool's name (a single checkpoint's curve: nothing). No parentheses:
    paper mode drops parenthesised detail from legend entries."""
    members = int(curve["members"][0]) if "members" in curve.columns and len(curve) else 1
    return f", {members} checkpoints" if members > 1 else ""


_PASSK_HOVER = (
    "%{customdata[0]}<br>k=%{x} · pass@k %{y:.1%}<br>95% CI %{customdata[1]}"
    " · n=%{customdata[2]} problems%{customdata[3]}<extra></extra>"
)


def _passk_hover(c: pl.DataFrame, band: bool, curve: str) -> list[list]:
    """Per point: the curve's name, its CI as text (or why none), problems, and pool size."""
    n = c["n_problems"].to_list() if "n_problems" in c.columns else ["?"] * len(c)
    members = c["members"].to_list() if "members" in c.columns else [1] * len(c)
    name = [curve] * len(c)
    ci = [f"{lo:.1%}–{hi:.1%}" for lo, hi in zip(c["lo"], c["hi"], strict=True)] if band else ["not computed"] * len(c)
    return [
        [nm, interval, p, f" · {m} members" if m and m > 1 else ""]
        for nm, interval, p, m in zip(name, ci, n, members, strict=True)
    ]
