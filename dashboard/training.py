"""Training: RL runs' per-step curves (reward, outcome classes, pass rate per R_k, KL, length)."""

import streamlit as st

from backend.errors import UserError
from backend.rl.spec import KEPT_WARN
from dashboard import data
from dashboard.exports import figure_downloads, table_downloads
from dashboard.training_plots import training_curves

st.title("Training curves")
try:
    runs = data.experiments()
except UserError as err:
    st.error(str(err))
    st.stop()
runs = runs[runs["kind"] == "rl"]
if runs.empty:
    st.info("No RL runs yet. Launch one on the Launch page (RL tab) or with `python -m backend rl`.")
    st.stop()
ids = list(runs["id"])
names = dict(zip(runs["id"], runs["name"], strict=True))
wanted = st.query_params.get("run")
run = st.sidebar.selectbox(
    "RL run", ids, index=ids.index(wanted) if wanted in ids else 0, format_func=lambda i: names[i]
)
st.query_params["run"] = run
row = runs.set_index("id").loc[run]
st.caption(f"{row['name']} · status `{row['status']}`" + (f" · {row['note']}" if row["note"] else ""))
metrics = data.metrics(run)
if metrics.is_empty():
    st.info("This run has logged no steps yet.")
    st.stop()
st.caption(f"{metrics['step'].max()} steps logged. Values are per training step (one GRPO batch), not smoothed.")
saved = metrics.filter(metrics["name"] == "saved_update_kept_share").sort("step")
if not saved.is_empty():  # checkpoints saved in the base's dtype: what the rounding kept of the update
    step, share = saved["step"][-1], saved["value"][-1]
    (st.warning if share < KEPT_WARN else st.caption)(
        f"Checkpoint at step {step} was saved in the base's dtype: the rounding kept the update of {share:.1%} of "
        "the weights the run moved (`saved_update_*` in the table below); `--save-dtype float32` keeps all of it."
    )
for name, fig in training_curves(metrics).items():
    st.plotly_chart(fig, width="stretch", key=name)
    figure_downloads(fig, f"training_{name}")
table_downloads(metrics.pivot(on="name", index="step", values="value", aggregate_function="last"), "training_metrics")
