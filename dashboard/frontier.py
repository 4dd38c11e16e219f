"""Frontier: how the model fails as α moves, for one experiment or several overlaid."""

import streamlit as st

from dashboard import data, evidence
from dashboard.exports import all_figures_zip, figure_downloads, samples_download, table_downloads
from dashboard.paper_views import recovery_overlay, trend_bands
from dashboard.plots import failure_scatter, outcome_fractions, solve_rate

st.title("Frontier")
exp = data.experiment_picker()
if not exp:
    st.stop()
f = data.filters()
averaging = data.averaging()
others = data.overlay_picker(exp)
o = data.load_outcomes(exp, f)
if o is None:
    st.stop()


table = data.frontier(exp, f["difficulty"], f["platform"], f["setting"], averaging)
st.caption(
    f"{len(o.problems)} problems, {int(o.n.sum())} judged samples; fractions are {averaging.replace('_', ' ')}; CIs resample problems. "
    "Every time or memory failure counts as an optimization failure here, whatever the tier of its first failing "
    "test; `analyze frontier --opt-min-tier T` counts those below tier T as correctness failures."
)
shown = data.frontier_tables([exp, *others], f, averaging)
label = None if others else data.experiment_label(exp)
figures = {
    "outcomes_vs_alpha": outcome_fractions(shown, experiment=label),
    "frontier_scatter": failure_scatter(shown, experiment=label),
    "solve_rate": solve_rate(shown, experiment=label),
}
recovered = (
    [] if others or averaging != "per_problem" else evidence.recovery(exp, f["difficulty"], f["platform"], f["setting"])
)
if recovered:  # the recovery statistic is per problem, then averaged: drawn where the scatter is too
    recovery_overlay(figures["frontier_scatter"], recovered)
if not others:
    figures["trend_bands"] = trend_bands(evidence.trend(exp, f["difficulty"], f["platform"], f["setting"]))
if others:
    st.caption("Overlaid: " + "; ".join(f"**{name}**" for name in shown) + ". Each experiment has its own colour.")
for name, fig in figures.items():
    st.plotly_chart(fig, width="stretch", key=name)
    figure_downloads(fig, name)
all_figures_zip(exp, f, averaging)
samples_download(exp, f, o.problems)
st.subheader("Optimization failures by first failing tier")
st.caption(
    "Share of each checkpoint's samples whose first failing test (ascending input length) ran out of time or memory, "
    "by that test's tier: tier k means an input shorter than 10^k characters. A time-out at tier 1–2 is a program "
    "slow on a tiny input, not an efficiency failure at scale."
)
st.dataframe(data.optimization_tiers(exp, f["difficulty"], f["platform"], f["setting"]).to_pandas(), hide_index=True)
st.subheader("Frontier table")
st.dataframe(table.to_pandas(), hide_index=True, width="stretch")
table_downloads(table, "frontier_table")
if recovered:
    st.subheader("Does interpolation recover the independently trained checkpoints?")
    st.caption(
        "Distance from each independent checkpoint's (optimization, correctness) failure shares to the interpolation "
        "curve (endpoints and interpolated α, in order), with a 95% bootstrap CI over problems; dotted on the scatter."
    )
    st.dataframe(recovered, hide_index=True, width="stretch")
if not others:
    trend_result = evidence.trend(exp, f["difficulty"], f["platform"], f["setting"])
    st.caption(
        "Trend: least-squares slope of each failure share on α over the whole grid, with bootstrap CIs; the bands on "
        "its figure hold at every α at once (max-statistic bootstrap), where the per-α CIs above hold at each alone."
    )
    st.dataframe(trend_result["slopes"], hide_index=True)
st.subheader("Format failures by cause, and completion length")
st.caption(
    "Share of each checkpoint's samples that are format failures cut at the token limit (finish reason 'length'), "
    "that do not compile (CE), or that hold no code; they add up to its format failures. Mean completion tokens."
)
st.dataframe(
    evidence.format_causes(exp, f["difficulty"], f["platform"], f["setting"], averaging).to_pandas(), hide_index=True
)
