"""pass@k curves and matched-budget ensembles."""

import streamlit as st

from backend.analysis.churn import unique_solves, unique_solves_expected
from backend.analysis.ensembles import empty_cells
from dashboard import controls, evidence, view
from dashboard.exports import figure_downloads, table_downloads
from dashboard.figures import gains_chart, passk_chart, provenance

exp, f, v = controls.page_header("pass@k and ensembles")
o = v.outcomes
st.caption(controls.snapshot(v))
others = controls.overlay_picker(exp)
controls.custom_pool(v)
if not others:
    controls.passk_checkpoints(v)
sel = controls.selection(exp, f)
chart = passk_chart(v, sel)
if others and chart:  # every experiment's pools on the same axes: colour = experiment, dash = pool
    st.caption(
        "Overlaid: the pools of "
        + "; ".join(f"**{e}**" for e in chart[1]["experiment"].unique(maintain_order=True))
        + ". Colour = experiment, dash = pool; bands are 95% CIs over each experiment's problems."
    )
elif not others:
    st.caption(
        "Starts with the endpoints (α = 0 and 1) and every checkpoint the gain table below names as the best "
        "single at some k. The black dashed curve is that best single at each k as the gain table measures it: "
        "chosen on one half of each cell's samples and drawn as scored on the other (`pass_at_k`; the in-sample "
        "maximum, `pass_at_k_in_sample`, is optimistic), so it stops below half the samples."
    )
if empty := empty_cells(o):
    cells = ", ".join(f"{e['label']} on {e['problem_id']}" for e in empty[:10])
    more = f" and {len(empty) - 10} more" if len(empty) > 10 else ""
    st.warning(
        f"Left out of the curves (no judged sample): {cells}{more}. Each curve averages the problems all its members "
        "have samples of, up to k = the fewest samples of any cell that has one."
    )
if chart:
    fig = chart[0]
    st.plotly_chart(fig, width="stretch", key="passk")
    figure_downloads(fig, "passk_curves")
    st.caption(
        "Bands: mean ± 1.96 standard errors over problems (normal approximation; problems are the unit of resampling). "
        "A pool spends k samples: ⌊k/M⌋ from each of its M members, the rest to random members."
    )

st.subheader("Gain over the best single checkpoint at each k (matched sample budget)")
fig, table = gains_chart(v, sel)
st.plotly_chart(fig, width="stretch", key="gains")
figure_downloads(fig, "ensemble_gains")
st.dataframe(table.to_pandas(), hide_index=True, width="stretch")
table_downloads(table, "ensemble_gains", provenance(v, sel))
st.caption(
    "⌊k/M⌋ samples from each of M members, the remainder to uniformly random members (exact expectation). "
    "*baseline*: the sweep's checkpoint with the highest pass@k at that k, named on every row. "
    "The best single's and the greedy pool's *pass_at_k* are held out (scored on the half of the samples they "
    "were not chosen on), *pass_at_k_in_sample* the optimistic in-sample value. The gain is cross-fitted: the best "
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
unique, expected = unique_solves(o, sel.solved_at), unique_solves_expected(o, sel.solved_at)
# a count with no test: never a headline, always beside what noise alone gives (docs/analysis.md)
with st.expander(
    f"Problems only extrapolated checkpoints solve: {len(unique)} ({expected:.1f} expected from sampling noise alone "
    "if every α solved alike)"
):
    st.caption(
        f"Problems an extrapolated checkpoint solves and no interpolated one does "
        f"({controls.solved_words(sel.solved_at)}). Sweeps of identical checkpoints have some by noise alone: the "
        "expected count deals each problem's samples out at random among the α, every cell keeping its n. Whether "
        "the α axis solves more than its best single beyond noise is F3, on the Overview and the Churn page."
    )
    st.markdown(
        "\n".join(f"- [{p}](/problem?{view.link(problem=p)})" for p in unique)
        or "No problem is solved only by extrapolated checkpoints."
    )
