"""Checkpoints: one row per checkpoint to cite, with pass@1, pass@k, outcome shares and significance tiers."""

import streamlit as st

from backend.analysis.checkpoints import default_k, largest_k, tier_words, to_latex
from backend.outcomes import OutcomeClass
from dashboard import controls, view
from dashboard.exports import table_downloads
from dashboard.figures import provenance

ORDER = {  # ?sort=: the rows' order (the grid's headers also sort it, in the browser)
    "tier": ("tier, then pass@1", ["tier", "pass_at_1"], [False, True]),
    "pass_at_1": ("pass@1, best first", ["pass_at_1"], [True]),
    "pass_at_k": ("pass@k, best first", ["pass_at_k"], [True]),
    "alpha": ("α", ["alpha"], [False]),
}
SHARES = {
    OutcomeClass.CORRECT: OutcomeClass.CORRECT.value,
    OutcomeClass.OPTIMIZATION_FAILURE: "optimization f.",
    OutcomeClass.CORRECTNESS_FAILURE: "correctness f.",
    OutcomeClass.FORMAT_FAILURE: "format f.",
}


def _too_large(s: str) -> int:
    raise ValueError(f"k = {s} is above the most samples a problem has here")


exp, f, v = controls.page_header("Checkpoints")
o = v.outcomes
st.caption(controls.snapshot(v))
top = largest_k(o)
k = view.bound(
    st.sidebar.number_input,
    "k",
    "k of pass@k",
    default=default_k(o),
    to_text=str,
    from_text=lambda s: int(s) if 1 <= int(s) <= top else _too_large(s),
    min_value=1,
    max_value=top,
    help=f"The unbiased estimator, averaged over the problems a checkpoint has at least k samples of (at most {top}).",
)
order = view.bound(
    st.sidebar.selectbox, "sort", "Order rows by", list(ORDER), default="tier", format_func=lambda s: ORDER[s][0]
)
sel = controls.selection(exp, f)
table = v.checkpoints(int(k))
_, columns, descending = ORDER[order]
table = table.sort(columns, descending=descending, nulls_last=True)


def ci(name: str) -> list[str]:
    return [
        "—" if lo is None or lo != lo else f"[{lo:.3f}, {hi:.3f}]"
        for lo, hi in zip(table[f"{name}_lo"], table[f"{name}_hi"], strict=True)
    ]


shown = table.select(
    "label", "alpha", "point_kind", "tier", "tier_p", "tier_against", "problems", "samples"
).to_pandas()
shown.insert(8, "pass@1", table["pass_at_1"].to_list())
shown.insert(9, "pass@1 95% CI", ci("pass_at_1"))
shown.insert(10, f"pass@{k}", table["pass_at_k"].to_list())
shown.insert(11, f"pass@{k} 95% CI", ci("pass_at_k"))
for cls, name in SHARES.items():
    shown[name] = table[cls].to_list()
    shown[f"{name} 95% CI"] = ci(cls)
for column in [c for c in table.columns if c.startswith("pass_at_1_") and c not in ("pass_at_1_lo", "pass_at_1_hi")]:
    shown[f"pass@1 {column.removeprefix('pass_at_1_')}"] = table[column].to_list()
shown = shown.rename(columns={"tier_p": "tier p (Holm)", "tier_against": "beaten by", "point_kind": "kind"})
numbers = [c for c in shown.columns if c.startswith(("pass@", *SHARES.values())) and "CI" not in c]
st.dataframe(
    shown,
    hide_index=True,
    width="stretch",
    column_config={
        "alpha": st.column_config.NumberColumn("α", format="%g"),
        "tier p (Holm)": st.column_config.NumberColumn(format="%.4f"),
        **{c: st.column_config.NumberColumn(format="%.3f") for c in numbers},
    },
)
st.caption(
    f"{tier_words()}. *tier p (Holm)*: for a tier-1 checkpoint, its Holm-adjusted p of being as good as the best "
    "(above 0.05: not split off; *beaten by* names the one nearest to beating it); below tier 1, the p that split "
    "it off the tier above (at most 0.05; *beaten by* names who beat it). pass@1 is a problem's share of correct "
    f"samples averaged over problems (the Frontier's solve rate); pass@{k} is the unbiased estimator, averaged over "
    "the problems a checkpoint has at least k samples of. CIs: 95 % over problems, the Frontier table's "
    "(Student's t widened for skewness). Sort by any column's header, or in the sidebar (kept in the link). The "
    "tiers' calibration: docs/findings.md."
)
prov = provenance(v, sel)
table_downloads(table, "checkpoints", prov)
st.download_button(
    "LaTeX (booktabs)",
    to_latex(table, prov.stamped().lines()),
    "checkpoints.tex",
    "text/x-tex",
    key="checkpoints-latex",
    help="A booktabs tabular (\\usepackage{booktabs}), its provenance as % comments above it.",
)
