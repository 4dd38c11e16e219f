"""Launch: α sweeps, evals, RL runs and imports. Every field comes from the job's spec (dashboard/form.py),
validated by the same spec as the CLI; the spec's first error is shown in the form's words, below the
field it is about, or below the button when no one field is at fault (e.g. a checkpoint folder the
runner cannot read)."""

import streamlit as st

from backend.alpha import alpha_label, alpha_text, parse_alpha_grid
from backend.errors import FieldError, UserError
from backend.jobs import runner
from backend.problems.ccplus import CCPlusFilter
from backend.problems.importing import HUB_REPOS, run_import
from backend.problems.lcb import LCBFilter
from backend.records import Experiment
from backend.rl.spec import RLSpec
from backend.samples.spec import SampleImportSpec
from backend.specs import extra, form_label, help_text, ordered_fields, under_current_names, validate_spec
from backend.sweep import origin
from backend.sweep.spec import EvalSpec, SweepSpec
from backend.vocab import ImportSource, choices
from dashboard import data
from dashboard.form import UNSET, field_error, forget_error, remember_error, spec_widgets, widget

SOURCES = {"builtin": "our tiered benchmark", "lcb": "LiveCodeBench (JSONL)", "ccplus": "CodeContests+ (Parquet)"}
FILTERS = {"lcb": LCBFilter, "ccplus": CCPlusFilter}
PAGE_FIELDS = ("low", "high", "alphas", "bench", "problems")  # the sweep fields this page lays out itself
# the form's groups, by field name (a spec's fields are declared flat, one file per command)
JUDGING = {"backend", "time_limit_s", "memory_limit_mb"}
RUNNING = {
    "engine",
    "executor",
    "ray_address",
    "gpu_busy",
    "gpus",
    "tensor_parallel_size",
    "live_switch",
    "switch_endpoints",
    "merge_dtype",
    "keep_merges",
    *("server_url", "serve", "api_key_env", "concurrency", "request_timeout_s", "server_start_timeout_s", "extra_body"),
}
GROUPS = (
    ("Sampling", None),
    ("Where it runs: engine, executor, GPUs", RUNNING),
    ("Judging: sandbox and limits", JUDGING),
)


st.title("Launch")
store = data.open_store()
try:
    registered = data.registered_checkpoints()
except UserError as err:
    st.error(str(err))
    st.stop()


def checkpoint_field(model, name: str, key: str, form: str, value: str | None = None) -> str:
    """A registered checkpoint, or a typed folder: one or the other, never both (the path box is
    closed while a registered one is picked); `value` is a stored spec's folder."""
    label = form_label(name, model.model_fields[name])
    options = ["(type a path)", *registered]
    index = options.index(value) if value in registered else 0
    pick = st.selectbox(label, options, index=index, key=f"{key}-pick", format_func=lambda p: registered.get(p, p))
    typed = st.text_input(
        f"{label}: path",
        "" if index or not value else value,
        key=f"{key}-path",
        placeholder="/path/to/checkpoint or org/name[@revision]",
        disabled=pick != options[0],
        help="Closed while a registered checkpoint is picked above: pick “(type a path)” to type one.",
    )
    chosen = typed.strip() if pick == options[0] else pick
    field_error(st, form, name)
    return chosen


def start_from(model) -> tuple[str, dict]:
    """A stored experiment whose spec pre-fills the form: (the widget-key prefix that goes with it, so
    picking another one redraws every widget with its values; the stored spec, {} for the defaults)."""
    kind = model.model_fields["kind"].default  # the job kind, as the spec declares it
    stored = {e.id: e for e in origin.startable(store, kind)}
    pick = st.selectbox(
        "Start from experiment",
        ["", *stored],
        key=f"{kind}-start",
        format_func=lambda i: f"{stored[i].name} ({i})" if i else "(the spec's defaults)",
        help="Pre-fills every field from the spec stored with that experiment, its recipe "
        "included; the name is yours to give.",
    )
    return (f"{pick}/" if pick else ""), (under_current_names(model, stored[pick].spec) if pick else {})


def measured_for(spec: dict, folders: list[str], form: str):
    """The experiment these checkpoints were measured on, where no stored spec pre-fills the form:
    found once per form and set of folders in this session. A sweep launched from the form measures
    its endpoints too; taking it as theirs then redrew every field with its recipe, and *At most N
    problems* (no part of a recipe) went back to all: a relaunch 40 times bigger than the last."""
    if spec:
        return None
    memo = st.session_state.setdefault("_flab_measured", {})
    key = (form, tuple(sorted(f for f in folders if f)))
    if key not in memo:
        found = origin.measured_on(store, folders)
        memo[key] = found.id if found else None
    return store.get(Experiment, memo[key]) if memo[key] else None


SAMPLING = ("n", "temperature", "top_p", "max_tokens")  # what a measuring experiment's recipe lends the form


def recipe(key: str, stored: dict, measured) -> tuple[str, dict]:
    """The option widgets' key and values: a stored spec's, else the sampling of the experiment the
    checkpoints were measured on (the lab's endpoints: the lab's T = 0.4, 384 tokens, 16 samples),
    under a key of its own so the widgets redraw with it."""
    if stored or not (measured and measured.spec):
        return key, stored
    return f"{key}@{measured.id}", {k: measured.spec[k] for k in SAMPLING if k in measured.spec}


def problem_fields(key: str, form: str, spec: dict, measured) -> dict:
    """The benchmark, a choice among the problem sets in the database, and the problems picked from
    it. They default to the stored spec's, else to those the checkpoints were measured on."""
    index = data.problem_index()
    source = spec or (measured.spec if measured else {})
    wanted = source.get("bench") or "builtin"
    benches = sorted(index) or ["builtin"]  # an empty database: problems are built or imported before the job runs
    if measured:
        st.caption(f"Benchmark and problems: those of **{measured.name}**, where these checkpoints were measured.")
    if wanted not in benches:
        st.warning(f"Problem set {wanted!r} is not in this database; import it (Import problems) or choose another.")
    bench = st.selectbox(
        form_label("bench", SweepSpec.model_fields["bench"]),
        benches,
        index=benches.index(wanted) if wanted in benches else 0,
        key=f"{key}-bench-{wanted}",
        format_func=lambda b: f"{b} ({count(len(index.get(b, [])), 'problem')})",
        help=help_text(SweepSpec.model_fields["bench"]),
    )
    field_error(st, form, "bench")
    titles = {pid: f"{pid}: {title}" + (f" ({diff})" if diff else "") for pid, title, diff in index.get(bench, [])}
    chosen = [p for p in source.get("problems") or [] if p in titles] if bench == wanted else []
    problems = st.multiselect(
        "Problems (none picked: every problem of the set)",
        list(titles),
        default=chosen,
        format_func=titles.get,
        key=f"{key}-problems-{bench}-{measured.id if measured else ''}",
        help=help_text(SweepSpec.model_fields["problems"]),
    )
    field_error(st, form, "problems")
    return {"bench": bench, "problems": problems}


def grouped_options(model, key: str, values: dict, skip: tuple[str, ...], form: str) -> dict:
    """The spec's remaining fields in three groups, each under its heading: sampling (and the
    problems' filters), where the job runs (engine, executor, GPUs) and how it is judged."""
    names = [n for n, f in ordered_fields(model) if extra(f).get("form", True) is not False and n not in skip]
    out = {}
    for title, group in GROUPS:
        picked = [n for n in names if (n in group if group else n not in RUNNING | JUDGING)]
        if picked:
            st.markdown(f"**{title}**")
            out |= spec_widgets(model, key, only=picked, values=values, form=form)
    return out


def launch_size(points: int | None, chosen: dict, options: dict) -> str:
    """What a launch will run, before it runs: points × problems × samples per problem."""
    index = data.problem_index().get(chosen["bench"], [])
    wanted = options.get("difficulty")
    problems = len(chosen["problems"]) or sum(1 for _, _, d in index if not wanted or d == wanted)
    if options.get("limit"):
        problems = min(problems, options["limit"])
    if points is None:
        return "Samples this launch runs: fix the fields above first."
    total = points * problems * options["n"]
    return (
        f"This launch samples {count(points, 'checkpoint')} × {count(problems, 'problem')} × "
        f"{options['n']} samples per problem = **{total:,} samples**, each judged in the sandbox."
    )


def sweep_points(grid: str, carried: dict) -> int | None:
    """The sweep's checkpoints: its α points and the independent ones; None for a grid that does not parse."""
    try:
        return len(parse_alpha_grid(grid)) + len(carried.get("independent", []))
    except (ValueError, UserError):
        return None


STABLE_ALPHA = 2.0  # the paper's stable range of extrapolation, |α| ≤ 2


def _alphas(alphas: list[float]) -> str:
    """ "α = 3 is" or "α = 3 and α = -3 are", for a sentence."""
    return " and ".join(alpha_label(a, spaced=True) for a in alphas) + (" are" if len(alphas) > 1 else " is")


def grid_notes(grid) -> list[str]:
    """What the form says of an α grid it accepts: α beyond the paper's stable range, and α written
    more than once (a sweep samples each α once: "0,0" is one point). A grid that does not parse is
    the spec's error, shown when launched."""
    text = grid if isinstance(grid, str) else ", ".join(alpha_text(a) for a in grid or [])
    try:
        alphas = parse_alpha_grid(text)
        written = [a for part in text.split(",") if part.strip() for a in parse_alpha_grid(part)]
    except (UserError, ValueError):
        return []
    notes = []
    far = [a for a in alphas if abs(a) > STABLE_ALPHA]
    if far:
        notes.append(
            f"{_alphas(far)} beyond |α| ≤ {alpha_text(STABLE_ALPHA)}, the range where the paper "
            "found extrapolated merges stable: this far out a merge usually stops writing runnable code. It runs "
            "as typed."
        )
    repeated = sorted({a for a in written if written.count(a) > 1})
    if repeated:
        notes.append(
            f"{_alphas(repeated)} written more than once: each α is one checkpoint, "
            f"sampled once, so this sweep runs {count(len(alphas), 'α point')}, not {len(written)}."
        )
    return notes


def carried_fields(model, stored: dict) -> dict:
    """The stored spec's set fields that have no widget here (form=False: e.g. a sweep's independent
    checkpoints, an eval's Ray address): shown, and launched as stored."""
    fields = model.model_fields
    carried = {
        k: v
        for k, v in stored.items()
        if v not in (None, [], "")
        and k in fields
        and extra(fields[k]).get("form", True) is False
        and extra(fields[k]).get("cli", True)
    }
    if carried:
        st.caption(
            "Also from the stored spec: "
            + "; ".join(
                f"{form_label(k, model.model_fields[k])}: {', '.join(map(str, v)) if isinstance(v, list) else v}"
                for k, v in carried.items()
            )
        )
    return carried


def count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def submit(form: str, cls, fields: dict, carried: dict) -> None:
    """Launch the job of `fields` (the form's widgets) and `carried` (the stored spec's fields
    without one); an error about a field with a widget is drawn there on a rerun."""
    forget_error(form)
    try:
        spec = validate_spec(cls, {**fields, **carried}, form_label)
        job = runner.create_job(store, spec)
        runner.start(store, job.id)
    except FieldError as err:
        if err.field not in fields:
            st.error(str(err))
            return
        remember_error(form, err)
        st.rerun()
    except UserError as err:
        st.error(str(err))
        return
    st.success(f"Job {job.id} started (experiment {job.experiment_id}).")
    st.page_link("dashboard/jobs.py", label=f"Follow job {job.id} on the Jobs page", query_params={"job": job.id})


sweep_tab, eval_tab, rl_tab, import_tab, samples_tab = st.tabs(
    ["α sweep", "Eval checkpoints", "RL (GRPO)", "Import problems", "Import samples"]
)
with sweep_tab:  # no st.form: the benchmark and problem choices follow the endpoints as they are picked
    prefix, stored = start_from(SweepSpec)
    title = widget(st, "name", SweepSpec.model_fields["name"], f"{prefix}sweep-name", None, "sweep")
    ends = {
        name: checkpoint_field(SweepSpec, name, f"{prefix}{name}", "sweep", stored.get(name))
        for name in ("low", "high")
    }
    grid = widget(
        st, "alphas", SweepSpec.model_fields["alphas"], f"{prefix}sweep-alphas", stored.get("alphas", UNSET), "sweep"
    )
    for note in grid_notes(grid):
        st.warning(note)
    measured = measured_for(stored, list(ends.values()), "sweep")
    chosen = problem_fields(f"{prefix}sweep", "sweep", stored, measured)
    options = grouped_options(SweepSpec, *recipe(f"{prefix}sweep", stored, measured), (*PAGE_FIELDS, "name"), "sweep")
    carried = carried_fields(SweepSpec, stored)
    st.info(launch_size(sweep_points(grid, carried), chosen, options))
    if st.button("Launch sweep", type="primary", key="sweep-launch"):
        submit("sweep", SweepSpec, {"name": title, **ends, "alphas": grid, **chosen, **options}, carried)
with eval_tab:  # no st.form either: the benchmark follows the checkpoints as they are typed
    prefix, stored = start_from(EvalSpec)
    title = widget(st, "name", EvalSpec.model_fields["name"], f"{prefix}eval-name", None, "eval")
    paths = widget(
        st,
        "checkpoints",
        EvalSpec.model_fields["checkpoints"],
        f"{prefix}eval-checkpoints",
        stored.get("checkpoints", UNSET),
        "eval",
    )
    measured = measured_for(stored, paths, "eval")
    chosen = problem_fields(f"{prefix}eval", "eval", stored, measured)
    options = grouped_options(
        EvalSpec, *recipe(f"{prefix}eval", stored, measured), ("checkpoints", "bench", "problems", "name"), "eval"
    )
    carried = carried_fields(EvalSpec, stored)
    st.info(launch_size(len(paths) or None, chosen, options))
    if st.button("Launch eval", type="primary", key="eval-launch"):
        submit("eval", EvalSpec, {"name": title, "checkpoints": paths, **chosen, **options}, carried)
with rl_tab:
    prefix, stored = start_from(RLSpec)
    with st.form(f"{prefix}rl"):
        base = checkpoint_field(RLSpec, "base", f"{prefix}rl-base", "rl", stored.get("base"))
        options = spec_widgets(RLSpec, f"{prefix}rl", skip=("base",), columns=3, values=stored, form="rl")
        carried = carried_fields(RLSpec, stored)
        if st.form_submit_button("Launch RL job", type="primary"):
            submit("rl", RLSpec, {"base": base, **options}, carried)
with import_tab, st.form("import"):
    source = st.selectbox("Source", choices(ImportSource), format_func=SOURCES.get)
    hub = st.checkbox(f"Download the published files from the hub ({' / '.join(HUB_REPOS.values())})")
    path = st.text_input("Local path (LiveCodeBench / CodeContests+)").strip()
    filters = {}
    for name, model in (("lcb", LCBFilter), ("ccplus", CCPlusFilter)):
        with st.expander(f"{SOURCES[name]} options"):
            filters[name] = spec_widgets(model, f"import-{name}", columns=3)
    if st.form_submit_button("Import"):
        try:
            flt = None if source == "builtin" else validate_spec(FILTERS[source], filters[source], form_label)
            with st.spinner("Importing…"):
                st.success(run_import(store, source, path, flt, progress=False, hub=hub))
            data.forget_problem_index()  # the new set is offered at once
        except UserError as err:
            st.error(str(err))
with samples_tab, st.form("import-samples"):
    st.caption(
        "Samples made elsewhere, judged here and stored as an experiment of their own: JSONL, one sample a line, "
        "or LiveCodeBench's custom_evaluator JSON as it is. The whole file is checked first (a bad one stores "
        "nothing); importing the same file again adds nothing."
    )
    values = spec_widgets(SampleImportSpec, "samples", columns=3, form="samples")
    if st.form_submit_button("Import samples"):
        from backend.samples.importer import import_samples

        try:
            spec = validate_spec(SampleImportSpec, values, form_label)
            with st.spinner("Checking the file, then judging its samples…"):
                st.success(import_samples(store, spec, progress=False).line())
        except UserError as err:
            st.error(str(err))
