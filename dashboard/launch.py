"""Launch: α sweeps, evals, RL runs and imports. Every field comes from the job's spec (dashboard/form.py),
validated by the same spec as the CLI; the spec's first error is shown in the form's words."""

import streamlit as st

from backend.errors import UserError
from backend.jobs import runner
from backend.problems.ccplus import CCPlusFilter
from backend.problems.importing import run_import
from backend.problems.lcb import LCBFilter
from backend.rl.spec import RLSpec
from backend.specs import form_label, validate_spec
from backend.sweep.spec import EvalSpec, SweepSpec
from backend.vocab import ImportSource, choices
from dashboard import data
from dashboard.form import spec_widgets, widget

SOURCES = {"builtin": "our tiered benchmark", "lcb": "LiveCodeBench (local files)", "ccplus": "CodeContests+ (Parquet)"}
FILTERS = {"lcb": LCBFilter, "ccplus": CCPlusFilter}


st.title("Launch")
store = data.open_store()
try:
    registered = data.registered_checkpoints()
except UserError as err:
    st.error(str(err))
    st.stop()


def checkpoint_field(model, name: str, key: str) -> str:
    """A registered checkpoint, or a typed folder (which wins)."""
    label = form_label(name, model.model_fields[name])
    options = ["(type a path)", *registered]
    pick = st.selectbox(label, options, key=f"{key}-pick", format_func=lambda p: registered.get(p, p))
    typed = st.text_input(f"{label}: path", key=f"{key}-path", placeholder="/path/to/checkpoint")
    return typed.strip() or ("" if pick == options[0] else pick)


def submit(cls, payload: dict) -> None:
    try:
        spec = validate_spec(cls, payload, form_label)
        job = runner.create_job(store, spec)
        runner.start(store, job.id)
    except UserError as err:
        st.error(str(err))
        return
    st.success(f"Job {job.id} started (experiment {job.experiment_id}).")
    st.page_link("dashboard/jobs.py", label=f"Follow job {job.id} on the Jobs page", query_params={"job": job.id})


sweep_tab, eval_tab, rl_tab, import_tab = st.tabs(["α sweep", "Eval checkpoints", "RL (GRPO)", "Import problems"])
with sweep_tab, st.form("sweep"):
    ends = {name: checkpoint_field(SweepSpec, name, name) for name in ("low", "high")}
    grid = widget(st, "alphas", SweepSpec.model_fields["alphas"], "sweep-alphas")
    options = spec_widgets(SweepSpec, "sweep", skip=("low", "high", "alphas"))
    if st.form_submit_button("Launch sweep", type="primary"):
        submit(SweepSpec, {**ends, "alphas": grid, **options})
with eval_tab, st.form("eval"):
    paths = widget(st, "checkpoints", EvalSpec.model_fields["checkpoints"], "eval-checkpoints")
    options = spec_widgets(EvalSpec, "eval", skip=("checkpoints",))
    if st.form_submit_button("Launch eval", type="primary"):
        submit(EvalSpec, {"checkpoints": paths, **options})
with rl_tab, st.form("rl"):
    base = checkpoint_field(RLSpec, "base", "rl-base")
    options = spec_widgets(RLSpec, "rl", skip=("base",), columns=3)
    if st.form_submit_button("Launch RL job", type="primary"):
        submit(RLSpec, {"base": base, **options})
with import_tab, st.form("import"):
    source = st.selectbox("Source", choices(ImportSource), format_func=SOURCES.get)
    path = st.text_input("Local path (LiveCodeBench / CodeContests+)").strip()
    filters = {}
    for name, model in (("lcb", LCBFilter), ("ccplus", CCPlusFilter)):
        with st.expander(f"{SOURCES[name]} options"):
            filters[name] = spec_widgets(model, f"import-{name}", columns=3)
    if st.form_submit_button("Import"):
        try:
            flt = None if source == "builtin" else validate_spec(FILTERS[source], filters[source], form_label)
            with st.spinner("Importing…"):
                st.success(run_import(store, source, path, flt, progress=False))
        except UserError as err:
            st.error(str(err))
