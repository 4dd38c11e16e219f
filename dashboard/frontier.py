"""Frontier: how the model fails as α moves, for one experiment or several overlaid."""

import streamlit as st

from dashboard import data
from dashboard.exports import all_figures_zip, figure_downloads, samples_download, table_downloads
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
    f"{len(o.problems)} problems, {int(o.n.sum())} judged samples; fractions are {averaging.replace('_', ' ')}; CIs resample problems."
)
shown = data.frontier_tables([exp, *others], f, averaging)
label = None if others else data.experiment_label(exp)
figures = {
    "outcomes_vs_alpha": outcome_fractions(shown, experiment=label),
    "frontier_scatter": failure_scatter(shown, experiment=label),
    "solve_rate": solve_rate(shown, experiment=label),
}
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
