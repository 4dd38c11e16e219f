"""Overview: the experiments in the database and the terms used everywhere else."""

import streamlit as st

from backend.analysis.frame import SOLVED_AT
from backend.errors import UserError
from backend.lab.report import to_markdown
from backend.lab.styles import MATCH
from backend.plots import outcome_fractions, style_shares
from pages import data

data.require_app_shell()

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
    shown = experiments.assign(note=experiments["note"].fillna("")) if "note" in experiments else experiments
    st.dataframe(shown, hide_index=True, width="stretch")  # no "None" for a missing note
    st.caption("The *note* column says what each experiment is, e.g. a miniature lab on a tiny CPU model.")

lab_experiment, lab_rows = data.lab_findings()
if lab_rows:
    st.subheader("Miniature lab: does the paper show at this scale?")
    st.caption(
        "A tiny Qwen2 trained on this CPU on our own builtin problems (SFT, then GRPO with R_low and R_inf), "
        "merged, sampled and judged for real; evaluated on the problems it was trained on. Verdicts use 95% "
        "bootstrap CIs over problems; a finding that does not show is reported as such; "
        f"{data.solved_words(SOLVED_AT)}, the dashboard's default. "
        "Reproduce with `python -m backend lab build`."
    )
    st.dataframe(
        [{"finding": r["finding"], "shows here?": "yes" if r["shows"] else "no", "criterion": r["criterion"]} for r in lab_rows],
        hide_index=True, width="stretch",
    )  # fmt: skip
    with st.expander("Numbers behind the verdicts"):
        st.markdown(to_markdown(lab_rows))
    st.plotly_chart(style_shares(data.lab_styles(lab_experiment)), key="styles")
    st.caption(
        f"Why the endpoints differ: θ_low is trained with a lenient reward (R_k, small k), which brute force passes, and "
        f"θ_high with R_inf. Each sample is matched to the nearest of its problem's SFT programs (reference, brute "
        f"force, buggy-fast) by token similarity with its own names folded together; below {MATCH:.0%} similarity it "
        f"resembles none (`backend/lab/styles.py`). The shaded band is interpolation."
    )
    st.page_link("pages/frontier.py", label="Open the lab's frontier", query_params={"exp": lab_experiment})

newest = data.newest_with_results()
if newest:
    try:
        glance = data.frontier(newest[0], None, None, None, "per_problem")
    except UserError:
        glance = None  # nothing judged yet
    if glance is not None:
        st.subheader("Newest experiment at a glance")
        st.plotly_chart(outcome_fractions(glance, title=f"{newest[1]}: how samples fail as α moves"), key="glance")
        st.page_link("pages/frontier.py", label="Open its frontier", query_params={"exp": newest[0]})

with st.expander("Terms", expanded=experiments.empty):
    st.markdown(
        """
- **R_k**: reward 1 iff the program passes every test whose input has fewer than 10^k characters;
  **R_inf** passes the whole suite. Low k = *low coverage* (lenient), R_inf = *high coverage* (strict).
- **α**: the averaging coefficient. [0, 1] interpolates between θ_low and θ_high; outside it extrapolates.
- **Outcome classes** of a sample, decided by the first failing test in ascending input length:
  *correct*; *optimization failure* (time or memory limit); *correctness failure* (wrong answer,
  runtime error, compile error, output limit); *format failure* (no program in the output).
- **pass@k**: the chance that at least one of k samples is correct (unbiased estimator);
  **ensembles** spend the same k samples spread over several checkpoints.
"""
    )
