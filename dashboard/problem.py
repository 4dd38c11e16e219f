"""Problem drill-down: the statement, outcomes per α, and two samples compared across α."""

import pandas as pd
import streamlit as st

from dashboard import controls, data, view
from dashboard.samples import samples_view

heading = st.empty()  # the problem's title, once the problem is chosen (its widget sits below)
heading.title("Problem")
exp = controls.experiment_picker()
if not exp:
    st.stop()
v = controls.load_view(exp)
if v is None:
    st.stop()
o = v.outcomes
pid = view.bound(
    st.selectbox,
    "problem",
    "Problem",
    o.problems,
    default=o.problems[0],
    format_func=lambda p: f"{o.titles[o.problems.index(p)]}  ({p})",
)
problem, tests = data.problem(pid)
heading.title(problem.title if problem and problem.title else pid)
if problem is None:
    st.warning(f"{pid} is not in the problems table.")
    st.stop()
st.caption(
    f"{problem.difficulty or ''} · time limit {problem.time_limit_s:g}s · "
    f"memory {problem.memory_limit_mb} MB · {len(tests)} tests"
)
with st.expander("Statement", expanded=False):
    st.markdown(problem.statement)
    if problem.input_spec:
        st.markdown(f"**Input.** {problem.input_spec}\n\n**Output.** {problem.output_spec}")

p = o.problems.index(pid)
with st.expander("Outcomes per checkpoint", expanded=False):
    st.dataframe(
        pd.DataFrame(
            {"checkpoint": o.labels, "α": o.alphas, **{k: v[p] for k, v in o.counts.items()}, "samples": o.n[p]}
        ),
        hide_index=True,
        width="stretch",
    )

samples, evals = data.problem_samples(exp, pid)
samples_view(o, problem, samples, evals, tests)
