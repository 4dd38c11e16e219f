"""Figures for the paper's tests on the Frontier page (backend/analysis/recovery.py, trend.py), the gain
figure and the lab's program styles:
small additions beside dashboard/plots.py, in its palette and layout."""

from __future__ import annotations

import plotly.graph_objects as go
import polars as pl

from backend.alpha import alpha_label
from backend.analysis.ensembles import BEST
from backend.outcomes import OutcomeClass
from dashboard.passk_plots import MAX_BANDS, _band, best_single_name
from dashboard.plots import COLORS, LAYOUT, NAMES, _rgba, fitted_range, mark_alpha_axis
from dashboard.scatter import NO_FAILURES

RECOVERY_WORDS = {
    "shows": "off the curve",
    "does_not_show": "on the curve within the margin",
    "underpowered": "underpowered: neither off the curve nor shown within the margin",
    "not_tested": "not tested",
}


def _ci(r: dict) -> str:
    return "no CI" if r["distance_lo"] is None else f"95% CI {r['distance_lo']:.3f}–{r['distance_hi']:.3f}"


def recovery_overlay(fig: go.Figure, rows: list[dict]) -> go.Figure:
    """On the frontier scatter (x: correctness failures, y: optimization failures), a dotted line
    from each independent checkpoint to the nearest point of the interpolation curve, its distance,
    CI and status (recovery.recovery) on hover."""
    for r in rows:
        fig.add_trace(
            go.Scatter(
                x=[r["correctness_share"], r["nearest_correctness_share"]],
                y=[r["optimization_share"], r["nearest_optimization_share"]],
                mode="lines",
                line=dict(color="#CC79A7", width=1.5, dash="dot"),
                name=f"{r['label']}: distance to interpolation",
                hovertemplate=(
                    f"{r['label']}: {r['distance']:.3f} from the interpolation curve ({_ci(r)}), "
                    f"nearest at {alpha_label(round(r['nearest_alpha'], 2))}; {RECOVERY_WORDS[r['status']]}"
                    "<extra></extra>"
                ),
            )
        )
    return fig


def trend_bands(result: dict, title: str = "Failure shares along α, with simultaneous 95% bands") -> go.Figure:
    """Each failure share against α with the band that holds at every α at once (trend.trend)."""
    fig = go.Figure()
    for cls in (OutcomeClass.OPTIMIZATION_FAILURE, OutcomeClass.CORRECTNESS_FAILURE):
        rows = [b for b in result["bands"] if b["class"] == cls]
        if not rows:
            continue
        alphas = [b["alpha"] for b in rows]
        fig.add_trace(
            go.Scatter(
                x=alphas + alphas[::-1],
                y=[b["band_hi"] for b in rows] + [b["band_lo"] for b in rows][::-1],
                mode="lines",
                fill="toself",
                fillcolor=_rgba(COLORS[cls], 0.2),
                line=dict(width=0),
                hoverinfo="skip",
                name=f"{NAMES[cls]}: simultaneous 95% band",
            )
        )
        fig.add_trace(
            go.Scatter(
                x=alphas,
                y=[b["share"] for b in rows],
                mode="lines+markers",
                name=NAMES[cls],
                line=dict(color=COLORS[cls]),
            )
        )
    mark_alpha_axis(fig, [b["alpha"] for b in result["bands"]])
    values = [min(1.0, max(0.0, b[key])) for b in result["bands"] for key in ("share", "band_lo", "band_hi")]
    if values and max(values) == 0.0:  # flat at 0: Plotly's own range ran from −100 % to 100 % and said nothing
        fig.add_annotation(text=NO_FAILURES, xref="paper", yref="paper", x=0.5, y=0.5, showarrow=False)
    # the legend below, as on the other Frontier charts: on the right, its four long names took 370 px
    # of the width, leaving the plot 90 px wide in a 540 px column
    fig.update_layout(
        title=title,
        xaxis_title="α",
        yaxis_title="share of samples",
        yaxis_tickformat=".0%",
        yaxis_range=fitted_range(values or [0.0], min_span=0.05),  # a share: inside 0–100 %
        legend=dict(orientation="h", y=-0.25),
        **LAYOUT,
    )
    return fig


BASELINE = "baseline (best single at this k)"  # the gain table's column naming, at each k, the checkpoint it is over


def gain_curves(gains, title: str = "Gain over the best single at each k, with 95% CI bands") -> go.Figure:
    """Each pool's cross-fitted gain over the best single (ensembles.gain_table) against k, its CI as a
    band (MAX_BANDS at once, the others a click on their legend entry away); the hover names the
    baseline at that k (the table's last column), and the zero line is the best single, named with
    the checkpoint it is at each k."""
    fig = go.Figure()
    palette = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9"]
    pools = [p for p in gains["pool"].unique(maintain_order=True) if p != BEST]
    for i, pool in enumerate(pools):
        rows = gains.filter(gains["pool"] == pool).sort("k")
        k, color, shown = rows["k"].to_list(), palette[i % len(palette)], i < MAX_BANDS
        fig.add_trace(
            _band(
                k,
                rows["gain_lo"].to_list(),
                rows["gain_hi"].to_list(),
                color,
                name=f"{pool}: 95% CI",
                legendgroup=pool if shown else f"{pool}: band",
                showlegend=not shown,
                visible=True if shown else "legendonly",
            )
        )
        fig.add_trace(
            go.Scatter(
                x=k,
                y=rows["gain"].to_list(),
                mode="lines+markers",
                name=pool,
                legendgroup=pool,
                line=dict(color=color),
                customdata=rows.select(BASELINE, "gain_lo", "gain_hi").rows(),
                hovertemplate=f"{pool}<br>k=%{{x}} · gain %{{y:+.3f}} [%{{customdata[1]:+.3f}}, "
                "%{customdata[2]:+.3f}] over %{customdata[0]}<extra></extra>",
            )
        )
    best = gains.filter(gains["pool"] == BEST).sort("k")
    if len(best):  # the zero line is the best single itself: named, each k's checkpoint on hover
        fig.add_trace(
            go.Scatter(
                x=best["k"],
                y=[0.0] * len(best),
                mode="lines+markers",
                name=best_single_name(best["k"].to_list(), best[BASELINE].to_list()),
                line=dict(color="#000000", width=1.5, dash="dash"),
                marker=dict(size=4),
                customdata=best[BASELINE].to_list(),
                hovertemplate="k=%{x}: the best single is %{customdata}<extra></extra>",
            )
        )
    fig.update_layout(
        title=title,
        xaxis_title="k (samples)",
        yaxis_title="pass@k − best single's pass@k",
        legend=dict(orientation="h", y=-0.2, yanchor="top"),
        **LAYOUT,
    )
    return fig


STYLE_NAMES = {
    "brute": "brute-force-style",
    "reference": "reference-style",
    "buggy": "buggy-fast-style",
    "other": "like no SFT program",
    "no program": "no program",
}
STYLE_COLORS = {
    "brute": "#E69F00",
    "reference": "#009E73",
    "buggy": "#D55E00",
    "other": "#999999",
    "no program": "#CCCCCC",
}


def style_shares(frame: pl.DataFrame, title: str = "Which SFT program each sample resembles, along α") -> go.Figure:
    """Share of samples per program style at each α (backend/lab/styles.py), each with its
    bootstrap 95% CI over problems as error bars (bars, not bands: five bands overlap)."""
    fig = go.Figure()
    for style, name in STYLE_NAMES.items():
        part = frame.filter(pl.col("style") == style)
        bars = None
        if "share_lo" in part.columns:
            bars = dict(
                type="data",
                array=(part["share_hi"] - part["share"]).to_list(),
                arrayminus=(part["share"] - part["share_lo"]).to_list(),
                thickness=1,
                width=3,
            )
        fig.add_trace(
            go.Scatter(
                x=part["alpha"],
                y=part["share"],
                mode="lines+markers",
                name=name,
                error_y=bars,
                line={"color": STYLE_COLORS[style]},
            )
        )
    mark_alpha_axis(fig, frame["alpha"].to_list())
    fig.update_layout(
        title=title + "<br><sup>Bars: bootstrap 95% CI over problems; grey: extrapolation</sup>",
        xaxis_title="α",
        yaxis_title="share of samples",
        yaxis_tickformat=".0%",
        yaxis_range=[0, 1.02],
        legend={"orientation": "h", "y": -0.25},
        **LAYOUT,
    )
    return fig
