"""Frontier: how the model fails as α moves."""

import streamlit as st

from backend.plots import failure_scatter, outcome_fractions, solve_rate
from pages import data
from pages.exports import all_figures_zip, figure_downloads, table_downloads

data.require_app_shell()

st.title("Frontier")
exp = data.experiment_picker()
if not exp:
    st.stop()
f = data.filters()
averaging = data.averaging()
o = data.load_outcomes(exp, f)
if o is None:
    st.stop()


table = data.frontier(exp, f["difficulty"], f["platform"], f["setting"], averaging)
st.caption(
    f"{len(o.problems)} problems, {int(o.n.sum())} judged samples; fractions are {averaging.replace('_', ' ')}; CIs resample problems."
)
figures = {
    "outcomes_vs_alpha": outcome_fractions(table),
    "frontier_scatter": failure_scatter(table),
    "solve_rate": solve_rate(table),
}
for name, fig in figures.items():
    st.plotly_chart(fig, width="stretch", key=name)
    figure_downloads(fig, name)
all_figures_zip(exp, f, averaging)
st.subheader("Frontier table")
st.dataframe(table.to_pandas(), hide_index=True, width="stretch")
table_downloads(table, "frontier_table")
