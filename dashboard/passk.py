"""pass@k curves and matched-budget ensembles."""

import polars as pl
import streamlit as st

from backend.analysis.ensembles import unique_solves
from backend.analysis.frame import default_passk_selection
from dashboard import data, evidence, view
from dashboard.exports import figure_downloads, table_downloads
from dashboard.paper_views import gain_curves
from dashboard.plots import passk_curves as passk_figure

exp, f, o = data.page_header("pass@k and ensembles")
others = data.overlay_picker(exp)

labels = dict(zip(o.checkpoints, o.labels, strict=True))
pools = dict(data.passk_pools(exp, f["difficulty"], f["platform"], f["setting"]))
custom = st.multiselect("Pool builder: a custom ensemble", o.checkpoints, format_func=labels.get)
if custom:
    pools["custom"] = custom
if others:  # every experiment's pools on the same axes: colour = experiment, dash = pool
    curves = data.passk_overlay([exp, *others], f)
    st.caption(
        "Overlaid: the pools of "
        + "; ".join(f"**{e}**" for e in curves["experiment"].unique(maintain_order=True))
        + ". Colour = experiment, dash = pool; bands are 95% CIs over each experiment's problems."
    )
else:
    chosen = st.multiselect("Checkpoints", o.checkpoints, default=default_passk_selection(o), format_func=labels.get)
    st.caption("Starts with the endpoints (α = 0 and 1) and the best single checkpoint by pass@1.")
    shown = [(labels[c], (c,)) for c in chosen] + [(f"pool: {n}", tuple(m)) for n, m in pools.items() if len(m) > 1]
    curves = (
        data.passk_bands(exp, f["difficulty"], f["platform"], f["setting"], tuple(shown)) if shown else pl.DataFrame()
    )
if len(curves):
    fig = passk_figure(curves, experiment=None if others else data.experiment_label(exp))
    st.plotly_chart(fig, width="stretch", key="passk")
    figure_downloads(fig, "passk_curves")
    st.caption(
        "Bands: mean ± 1.96 standard errors over problems (normal approximation; problems are the unit of resampling). "
        "A pool spends k samples: ⌊k/M⌋ from each of its M members, the rest to random members."
    )

st.subheader("Gain over the best single checkpoint at each k (matched sample budget)")
gains = data.gains(exp, f["difficulty"], f["platform"], f["setting"], tuple((k, tuple(v)) for k, v in pools.items()))
st.plotly_chart(gain_curves(gains), width="stretch", key="gains")
st.dataframe(gains.to_pandas(), hide_index=True, width="stretch")
table_downloads(gains, "ensemble_gains")
st.caption(
    "⌊k/M⌋ samples from each of M members, the remainder to uniformly random members (exact expectation). "
    "*baseline*: the sweep's checkpoint with the highest pass@k at that k. The gain is cross-fitted: the best "
    "single (and the greedy pool) is chosen on one random half of each cell's samples and scored with the pool on "
    "the other, halves swapped and averaged, so it is not flattered by its own choice; hence k stops below half "
    "the samples. 95% CIs over problems, the choice made again in every bootstrap replicate (docs/analysis.md)."
)
if evidence.shares_seeds(exp):
    st.info(
        "This experiment's checkpoints drew **common seeds**: sample k of a problem used the same sampling noise at "
        "every checkpoint (it was stored before the `common_seeds` option existed, or launched with it). A pool's "
        "members therefore share seeds, their samples are more alike than independent draws, and a matched-budget "
        "pool's pass@k and gain can read low. New sweeps draw disjoint seeds per checkpoint."
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
