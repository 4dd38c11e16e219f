"""Overview: the experiments in the database and the terms used everywhere else."""

import pandas as pd
import streamlit as st

from backend.analysis.findings_text import excluded_lines, findings_table, overview_rows, preregistered_rows
from backend.errors import UserError
from backend.lab.styles import MATCH
from dashboard import controls, data
from dashboard.exports import report_download
from dashboard.paper_views import style_shares
from dashboard.plots import outcome_fractions

st.title("frontier-lab")
st.caption(
    "Weight averaging between RL checkpoints trained with verifiers of different strictness, "
    "θ_α = α·θ_high + (1−α)·θ_low, including extrapolation (α < 0 or α > 1), judged in a sandbox."
)

try:
    experiments = data.experiments()
except UserError as err:
    st.error(str(err))
    st.stop()

st.subheader("Experiments")
if experiments.empty:
    st.info(f"No experiments yet in `{data.db_path()}`. Launch an α sweep on the Launch page.")
else:
    notes = experiments["note"].fillna("") if "note" in experiments else None
    st.dataframe(
        experiments.drop(columns="note") if notes is not None else experiments, hide_index=True, width="stretch"
    )
    # the notes in full, below: a data grid cuts a long cell at its column's width
    if notes is not None and notes.str.strip().any():
        st.markdown("\n".join(f"- **{i}**: {n}" for i, n in zip(experiments["id"], notes, strict=True) if n.strip()))
    st.caption("Each note says what its experiment is, e.g. a miniature lab on a tiny CPU model.")

if not experiments.empty and (exp := controls.experiment_picker()):
    st.subheader("The paper's four findings in this experiment")
    st.caption(
        "Each finding has a criterion fixed in advance, a statistic with its CI over problems, and a status: "
        "**shows** (the criterion holds), **underpowered** (it does not, but the CI still reaches the effect the "
        "criterion needs), **does not show** (the CI rules that effect out), or **not tested** (with the reason, e.g. "
        "extrapolation is tested only where the frontier's direction holds). Churn and the ensemble choose on one half "
        "of each cell's samples and measure on the other. docs/findings.md states every rule. Pick another experiment "
        "in the sidebar."
    )
    try:
        v = data.experiment_view(exp)
        rows = v.findings()
    except UserError as err:
        st.info(f"Not checked: {err}")
    else:
        # a static table wraps each cell: a data grid cut the criteria at its column's width
        st.table(pd.DataFrame(overview_rows(rows)).set_index("finding"))
        st.caption(f"Time-outs on tiny inputs: {rows[0]['tiny_inputs']} (docs/findings.md says why).")
        for line in [controls.sandbox_errors_line(v), *excluded_lines(rows)]:
            if line:
                st.warning(line)
        with st.expander("Every part of every finding"):
            st.markdown(findings_table(rows))
    # one file for co-authors and reviewers: the figures, the checkpoint table, these findings, the spec
    report_download(exp)


def lab_styles_chart(experiment: str) -> None:
    st.plotly_chart(style_shares(data.lab_styles(experiment)), key="styles")
    st.caption(
        "Why the endpoints differ: θ_low is trained with a lenient reward (R_k, small k), which brute force passes, "
        f"and θ_high with R_inf. Each sample is matched to the nearest of its problem's SFT programs (reference, brute "
        f"force, buggy-fast) by token similarity with its own names folded together; below {MATCH:.0%} similarity it "
        f"resembles none (`backend/lab/styles.py`). Bars: bootstrap 95 % CIs over problems; grey: extrapolation."
    )


lab_experiment = data.lab_experiment()
if lab_experiment:
    st.subheader("Miniature lab: how its programs change along α")
    st.caption(
        "A tiny Qwen2 trained on this CPU on our own builtin problems (SFT, then GRPO with R_low and R_inf), "
        "merged, sampled and judged for real; evaluated on the problems it was trained on and on 6 held-out ones it "
        "never saw. Pick its sweep in the sidebar for its findings on every problem it evaluated; "
        "`python -m backend lab report` gives them per problem set (held-in, separating, held-out). "
        "Reproduce with `python -m backend lab build`."
    )
    # computed when opened: matching every sample against its problem's SFT programs takes a fresh
    # server 27 s of a 30 s first page on the loaded 2-core development machine (bench/first_page.py)
    controls.on_open(
        "Which SFT program each sample resembles, along α", "open-styles", lambda: lab_styles_chart(lab_experiment)
    )
    if tests := data.lab_tests(lab_experiment):
        st.subheader("Miniature lab: its pre-registered test, withheld against kept references")
        st.table(pd.DataFrame(preregistered_rows(tests)).set_index("test"))
        st.caption(
            "A tiny CPU model on our own problems: its numbers say nothing about real models. Half of the problems on "
            "which fast and slow code differ were taught without their reference program (*withheld*), half with it "
            "(*kept*). T1a/T1b: optimization failures fall and correctness failures rise from θ_low (α = 0) to θ_high "
            "(α = 1) on the withheld set; T1c: its solve rate stays flat, marked in advance as trivially met (nothing "
            "there is expected to be solved); in brackets the same parts on the kept set; T2: how much more "
            "correctness failures rise on the withheld set than on the kept set. 95 % CIs over problems; each test "
            "shows when its CI lies above 0 and needs +0.10. The criteria were committed before the build "
            "(docs/lab-preregistration.md)."
        )
    st.page_link("dashboard/frontier.py", label="Open the lab's frontier", query_params={"exp": lab_experiment})


def glance_chart(experiment: str, name: str) -> None:
    try:
        table = data.experiment_view(experiment).frontier("per_problem")
    except UserError as err:
        st.info(f"Nothing to draw yet: {err}")
        return
    st.plotly_chart(outcome_fractions(table, title=f"{name}: how samples fail as α moves"), key="glance")


if newest := data.newest_with_results():
    st.subheader("Newest experiment at a glance")
    # computed when opened: the first page draws no chart, so it does not wait for plotly.js (4.7 MB,
    # about 1 s of the browser's main thread on a 2-core machine); the Frontier opens with this chart
    controls.on_open(
        f"{newest[1]}: how samples fail as α moves", "open-glance", lambda: glance_chart(newest[0], newest[1])
    )
    st.page_link("dashboard/frontier.py", label="Open its frontier", query_params={"exp": newest[0]})

with st.expander("Terms", expanded=experiments.empty):
    st.markdown(
        """
- **R_k**: reward 1 iff the program passes every test whose input has fewer than 10^k characters;
  **R_inf** passes the whole suite. Low k = *low coverage* (lenient), R_inf = *high coverage* (strict).
- **α**: the averaging coefficient. [0, 1] interpolates between θ_low and θ_high; outside it extrapolates.
- **Outcome classes** of a sample, decided by the first failing test in ascending input length:
  *correct*; *optimization failure* (time or memory limit); *correctness failure* (a runnable program
  that answers wrongly, crashes or floods the output); *format failure* (no runnable program: no code
  block, a truncated one, or a program that does not parse or compile, verdict CE).
- **pass@k**: the chance that at least one of k samples is correct (unbiased estimator);
  **ensembles** spend the same k samples spread over several checkpoints.
"""
    )
