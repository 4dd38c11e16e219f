"""Churn: which problems each point on the α axis solves."""

import pandas as pd
import streamlit as st

from backend.alpha import alpha_text
from backend.analysis.findings_text import excess_sentence
from dashboard import controls, view
from dashboard.exports import figure_downloads
from dashboard.figures import GRID_ROWS, churn_figure
from dashboard.samples import default_pair, point_name

FLIP_COLUMNS = {
    "from": "from",
    "to": "to",
    "gained": "gained",
    "expected_gained": "gained, expected from noise",
    "lost": "lost",
    "expected_lost": "lost, expected from noise",
}

exp, f, v = controls.page_header("Per-problem churn")
o = v.outcomes
st.caption(controls.snapshot(v))
controls.ordering()
controls.grid_page(len(o.problems), GRID_ROWS)
sel = controls.selection(exp, f)
fig, _ = churn_figure(v, sel)
event = st.plotly_chart(fig, width="stretch", on_select="rerun", selection_mode="points", key="heatmap")
figure_downloads(fig, "churn_heatmap")
points = (event or {}).get("selection", {}).get("points", []) if event else []
if points:  # a clicked cell opens the samples view of that problem at the α clicked
    clicked = point_name(o, o.labels.index(points[0]["x"]))
    low, high = default_pair(o)
    view.put("problem", points[0]["y"])
    view.put("alpha", clicked)
    view.put("vs", low if clicked == high else high)
    st.switch_page(
        "dashboard/problem.py",
        query_params={"exp": exp, "problem": points[0]["y"], "alpha": clicked, "vs": view.get("vs")},
    )

stats = v.churn(sel.solved_at)
excess = stats["union_excess"]
st.caption(f"Counts below: {controls.solved_words(sel.solved_at)} (change it in the sidebar).")
c1, c2, c3, c4 = st.columns(4)
c1.metric("flips between neighbours", stats["total_flips"])
c2.metric("union of solved problems", stats["union_solved"])
c3.metric(f"best single ({stats['best_single']['label']})", stats["best_single"]["solved"])
c4.metric("flips expected from noise alone", f"{stats['total_flips_expected']:.1f}")
st.markdown(
    f"**Churn beyond noise (F3).** The union solves {stats['union_solved'] - stats['best_single']['solved']} more "
    "problems than the best single on all samples, a count that noise alone inflates. Chosen on one half of each "
    "cell's samples and checked on the other: "
    + excess_sentence(excess)
    + f" The Overview's F3 is this same number (docs/findings.md). {stats['total_flips']} flips between neighbouring "
    f"α, where {stats['total_flips_expected']:.1f} are expected from sampling noise alone if every α moved every "
    f"problem's log-odds alike (a model fitted to these counts, simulated {stats['null_replicates']} times)."
)
st.subheader("Problems that flip along α")
flipping = v.flipping(sel.solved_at)
if flipping:
    table = pd.DataFrame(flipping)
    table["samples"] = [
        "/problem?"
        + view.link(problem=r["problem_id"], alpha=alpha_text(r["alpha_solved"]), vs=alpha_text(r["alpha_unsolved"]))
        for r in flipping
    ]
    st.dataframe(
        table.drop(columns=["alpha_solved", "alpha_unsolved"]),
        hide_index=True,
        width="stretch",
        column_config={
            "samples": st.column_config.LinkColumn("samples view", display_text="compare solved vs unsolved")
        },
    )
    st.caption(
        "Sortable by any column. A row's link opens the samples view at the first flip: an α where the problem "
        "is solved next to one where it is not."
    )
else:
    st.info("No problem changes between solved and unsolved along α at this threshold.")
st.subheader("Flips between neighbouring α, observed and expected from noise")
if stats["flips"]:
    flips = pd.DataFrame(stats["flips"]).rename(columns=FLIP_COLUMNS)[list(FLIP_COLUMNS.values())]
    st.dataframe(flips, hide_index=True, width="stretch")
    st.caption("Expected: the mean over the no-churn model's simulated sweeps, each problem sampled as often as here.")
else:
    st.info("Fewer than two merged checkpoints: no α neighbours to compare.")
col_in, col_out = st.columns(2)
col_in.markdown(
    "**Solved only inside [0, 1]**\n\n"
    + ("\n".join(f"- [{p}](/problem?{view.link(problem=p)})" for p in stats["solved_only_inside"]) or "none")
)
col_out.markdown(
    "**Solved only outside [0, 1]**\n\n"
    + ("\n".join(f"- [{p}](/problem?{view.link(problem=p)})" for p in stats["solved_only_outside"]) or "none")
)
