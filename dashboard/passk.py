"""pass@k curves and matched-budget ensembles."""

import polars as pl
import streamlit as st

from backend.analysis.ensembles import (
    pool_curve,
    unique_solves,
)
from backend.analysis.frame import default_passk_selection
from dashboard import data, view
from dashboard.exports import figure_downloads, table_downloads
from dashboard.plots import passk_curves as passk_figure

exp, f, o = data.page_header("pass@k and ensembles")

labels = dict(zip(o.checkpoints, o.labels, strict=True))
chosen = st.multiselect("Checkpoints", o.checkpoints, default=default_passk_selection(o), format_func=labels.get)
st.caption("Starts with the endpoints (α = 0 and 1) and the best single checkpoint by pass@1.")


all_curves, standard = data.passk_tables(exp, f["difficulty"], f["platform"], f["setting"])
pools = dict(standard)
custom = st.multiselect("Pool builder: a custom ensemble", o.checkpoints, format_func=labels.get)
if custom:
    pools["custom"] = custom

curves = all_curves.filter(pl.col("checkpoint_id").is_in(chosen)) if chosen else pl.DataFrame()
ks = list(range(1, int(o.n.min()) + 1))
pool_rows = [pl.DataFrame({"label": f"pool: {name}", "checkpoint_id": "", "k": ks, "pass_at_k": pool_curve(o, members, ks).mean(axis=0),
                           "lo": None, "hi": None}, strict=False) for name, members in pools.items() if len(members) > 1]  # fmt: skip
if len(curves) or pool_rows:
    fig = passk_figure(pl.concat([curves, *pool_rows], how="diagonal_relaxed") if pool_rows else curves)
    st.plotly_chart(fig, width="stretch", key="passk")
    figure_downloads(fig, "passk_curves")

st.subheader("Gain over the best single checkpoint (matched sample budget)")
gains = data.gains(exp, f["difficulty"], f["platform"], f["setting"], tuple((k, tuple(v)) for k, v in pools.items()))
st.dataframe(gains.to_pandas(), hide_index=True, width="stretch")
table_downloads(gains, "ensemble_gains")
st.caption(
    "⌊k/M⌋ samples from each of M members, the remainder to uniformly random members (exact expectation); "
    "paired bootstrap 95% CIs over problems."
)
st.subheader("Unique solves of extrapolated checkpoints")
st.caption(
    f"Problems an extrapolated checkpoint solves and no interpolated one does ({data.solved_words(f['solved_at'])})."
)
unique = unique_solves(o, f["solved_at"])
st.markdown(
    "\n".join(f"- [{p}](/problem?{view.link(problem=p)})" for p in unique)
    or "No problem is solved only by extrapolated checkpoints."
)
