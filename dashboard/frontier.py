"""Frontier: how the model fails as α moves, for one experiment or several overlaid."""

from dataclasses import replace

import streamlit as st

from backend.analysis.recovery import MARGIN
from dashboard import controls, data
from dashboard.exports import all_figures_zip, figure_downloads, samples_download, table_downloads
from dashboard.figures import frontier_figures, provenance, views
from dashboard.plots import SOLVE_RATE

st.title("Frontier")
exp = controls.experiment_picker()
if not exp:
    st.stop()
f = replace(controls.filters(exp), opt_min_tier=controls.opt_min_tier())
averaging = controls.averaging()
controls.stacked()
others = controls.overlay_picker(exp)
v = controls.load_view(exp, f)
if v is None:
    st.stop()
sel = controls.selection(exp, f)

o = v.outcomes
table = v.frontier(averaging)
st.caption(
    f"{controls.snapshot(v)}. Fractions are {averaging.replace('_', ' ')}; CIs resample problems. {SOLVE_RATE} "
    + controls.tier_rule(f.opt_min_tier)
)
for line in (controls.sandbox_errors_line(v), controls.no_failures_line(v)):
    if line:
        st.warning(line)
if others:
    shown = views(v, sel)
    missing = [e for e in others if data.experiment_label(e) not in shown]
    for e in missing:
        st.warning(f"{e}: no judged samples match this experiment and these filters")
    st.caption("Overlaid: " + "; ".join(f"**{name}**" for name in shown) + ". Each experiment has its own colour.")
for name, (fig, _) in frontier_figures(v, sel).items():
    # a figure with its own size (the scatter: its labels are placed in pixels) is drawn at that size
    st.plotly_chart(fig, width="content" if fig.layout.width else "stretch", key=name)
    figure_downloads(fig, name)
all_figures_zip(v, sel)
samples_download(exp, f, o.problems)
st.subheader("Frontier table")
st.dataframe(table.to_pandas(), hide_index=True, width="stretch")
table_downloads(table, "frontier_table", provenance(v, sel))


def tiers() -> None:
    st.caption(
        "Share of each checkpoint's samples whose first failing test (ascending input length) "
        "ran out of time or memory, "
        "by that test's tier: tier k means an input shorter than 10^k characters. A time-out at tier 1–2 is a program "
        "slow on a tiny input, not an efficiency failure at scale."
    )
    st.dataframe(v.tiers().to_pandas(), hide_index=True)


def recovery_and_trend() -> None:
    recovered = v.recovery() if averaging == "per_problem" else []
    if recovered:
        st.caption(
            "**Does interpolation recover the checkpoints that are not merged?** Distance from each checkpoint "
            "evaluated as it is (the SFT start of both endpoints, or another run) to the interpolation curve "
            "(endpoints and interpolated α, in order) in (optimization, correctness) failure shares; dotted on the "
            "scatter. "
            "*status*: **does not show** (on the curve) when the distance's 90 % CI (t over problems, bias-corrected "
            f"so it can reach 0) lies inside the `margin`, 10 points in each share ({MARGIN}); otherwise "
            "**shows** (off the curve) when the distance is above the 95th percentile of distances of checkpoints "
            "drawn from the nearest curve point's own rates (`p_value` < 0.05), and **underpowered** when it is not."
        )
        st.dataframe(recovered, hide_index=True, width="stretch")
    else:
        st.caption("No recovery distances here: they need a checkpoint that is not merged, averaged per problem.")
    st.caption(
        "**Trend:** least-squares slope of each failure share on α over the whole grid, with bootstrap CIs; the bands "
        "on its figure hold at every α at once (max-statistic bootstrap), where the per-α CIs above hold at each alone."
    )
    st.dataframe(v.trend()["slopes"], hide_index=True)


def format_causes() -> None:
    st.caption(
        "Share of each checkpoint's samples that are format failures cut at the token limit (finish reason 'length'), "
        "that do not compile (CE), or that hold no code; they add up to its format failures. Mean completion tokens."
    )
    st.dataframe(v.format_causes(averaging).to_pandas(), hide_index=True)


# computed when opened: the tier and format-cause queries, and three table grids, that the charts above do not need
controls.on_open("Optimization failures by first failing tier", "open-tiers", tiers)
if not others:
    controls.on_open("Recovery of the checkpoints not merged, and the trend's slopes", "open-trend", recovery_and_trend)
controls.on_open("Format failures by cause, and completion length", "open-format", format_causes)
