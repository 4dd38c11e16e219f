"""Cached data access and shared controls for the pages: thin calls into backend (no SQL here).

The experiment, filters and selected problem are the view state (dashboard/view.py): in the session and the URL.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import polars as pl
import streamlit as st

from backend.analysis.churn import churn_stats, flipping_problems, order_problems
from backend.analysis.ensembles import gain_table, greedy_pool, merged, pool_bands, pool_curve, standard_pools
from backend.analysis.frame import SOLVED_AT, Outcomes, to_outcomes
from backend.analysis.frontier import frontier_table
from backend.errors import UserError
from backend.records import Checkpoint, Evaluation, Experiment, Job, Metric, Problem, Sample, Test
from backend.store import Store, default_db_path
from backend.vocab import DIFFICULTIES, SETTINGS
from dashboard import view

EXPERIMENT_KINDS_WITH_RESULTS = ("sweep", "eval", "rollout")  # the kinds whose experiments hold samples


def db_path() -> str:
    return str(default_db_path())


def _store(path: str) -> Store:
    # The dashboard never migrates or writes implicitly: `make run` migrated already.
    return Store(path, migrate=False)


def open_store() -> Store:
    """For the pages' explicit actions (Launch, Cancel, Resume, Import): each writes only when the
    user presses the button that says so."""
    return _store(db_path())


def registered_checkpoints() -> dict[str, str]:
    """path → "label (kind)" of the trained checkpoints a form can pick (merged points are made by sweeps)."""
    return {
        c.path: f"{c.label} ({c.kind})"
        for c in open_store().select(Checkpoint)
        if c.kind != "merged" and Path(c.path).is_dir()
    }


def problem_index() -> dict[str, list[tuple[str, str, str | None]]]:
    """bench → [(problem id, title, difficulty)]: the problem sets the Launch form offers."""
    return _problem_index(db_path())


@st.cache_data(ttl=10, show_spinner=False)
def _problem_index(path: str) -> dict[str, list[tuple[str, str, str | None]]]:
    return _store(path).problem_index()


def forget_problem_index() -> None:
    _problem_index.clear()


def experiments() -> pd.DataFrame:
    return _experiments(db_path())


@st.cache_data(ttl=5, show_spinner=False)
def _experiments(path: str) -> pd.DataFrame:
    rows = [dataclasses.asdict(e) for e in _store(path).select(Experiment, newest_first=True)]
    columns = ["id", "kind", "name", "note", "status", "created_at"]
    frame = pd.DataFrame(rows, columns=[*columns, "spec"])
    frame["α grid"] = [", ".join(f"{a:g}" for a in (s or {}).get("alphas", [])) for s in frame["spec"]]
    frame["setting"] = [(s or {}).get("setting", "") for s in frame["spec"]]
    frame["samples per problem"] = [(s or {}).get("n") for s in frame["spec"]]
    # experiments stored before prompt_format existed were all sampled with the chat template
    frame["prompt format"] = [(s or {}).get("prompt_format", "chat") if s else "" for s in frame["spec"]]
    return frame[[*columns, "α grid", "setting", "samples per problem", "prompt format"]]


@st.cache_data(ttl=30, show_spinner="Aggregating outcomes…")
def outcomes(experiment_id: str, difficulty: str | None, platform: str | None, setting: str | None) -> Outcomes:
    counts = _store(db_path()).outcome_counts(experiment_id, difficulty=difficulty, platform=platform, setting=setting)
    return to_outcomes(counts)


@st.cache_data(show_spinner=False)
def frontier(exp: str, difficulty, platform, setting, averaging: str) -> pl.DataFrame:
    return frontier_table(outcomes(exp, difficulty, platform, setting), averaging)


GREEDY = "greedy (max pass@max)"


@st.cache_data(show_spinner="Choosing pools…")
def passk_pools(exp: str, difficulty, platform, setting) -> dict[str, list[str]]:
    """The best single at pass@max, the standard pools (all interpolated, + extrapolated) and the greedy
    one (max pass@max), all of the sweep's own checkpoints: the curves the overlay draws per experiment."""
    o = outcomes(exp, difficulty, platform, setting)
    own = merged(o)
    kmax = int(o.n[:, [o.checkpoints.index(c) for c in own]].min())
    best = max(own, key=lambda c: pool_curve(o, [c], [kmax]).mean())
    return {"best single": [best], **standard_pools(o), GREEDY: greedy_pool(o, kmax)}


@st.cache_data(show_spinner="Computing pass@k bands…")
def passk_bands(
    exp: str, difficulty, platform, setting, pools: tuple[tuple[str, tuple[str, ...]], ...]
) -> pl.DataFrame:
    """Mean pass@k with 95% CI bands over problems per named pool (one member: a checkpoint)."""
    o = outcomes(exp, difficulty, platform, setting)
    return pool_bands(o, {name: list(members) for name, members in pools})


@st.cache_data(show_spinner=False)
def gains(exp: str, difficulty, platform, setting, pools) -> pl.DataFrame:
    """Gains over the best single at every k; the greedy pool is chosen again on each half (gain_table)."""
    fixed = {name: list(members) for name, members in pools if name not in (GREEDY, "best single")}
    return gain_table(outcomes(exp, difficulty, platform, setting), fixed, greedy=True)


@st.cache_data(show_spinner=False)
def churn_order(exp: str, difficulty, platform, setting, ordering: str) -> list[str]:
    return order_problems(outcomes(exp, difficulty, platform, setting), ordering)


@st.cache_data(show_spinner=False)
def churn(exp: str, difficulty, platform, setting, solved_at: float) -> dict:
    return churn_stats(outcomes(exp, difficulty, platform, setting), solved_at)


@st.cache_data(show_spinner=False)
def flipping(exp: str, difficulty, platform, setting, solved_at: float) -> list[dict]:
    return flipping_problems(outcomes(exp, difficulty, platform, setting), solved_at)


@st.cache_data(ttl=30, show_spinner=False)
def optimization_tiers(exp: str, difficulty, platform, setting) -> pl.DataFrame:
    from backend.analysis.frontier import optimization_by_tier

    tiers = _store(db_path()).optimization_tiers(exp, difficulty=difficulty, platform=platform, setting=setting)
    return optimization_by_tier(tiers)


@st.cache_data(ttl=30, show_spinner="Checking the paper's four findings…")
def findings(exp: str) -> list[dict]:
    """The four findings (backend/analysis/findings.py) of one experiment, unfiltered."""
    from backend.analysis.findings import findings as compute

    return compute(outcomes(exp, None, None, None))


def newest_with_results() -> tuple[str, str] | None:
    """(id, name) of the newest experiment that has results, which pages open by default."""
    frame = experiments()
    frame = frame[frame["kind"].isin(EXPERIMENT_KINDS_WITH_RESULTS)]
    return None if frame.empty else (frame["id"].iloc[0], frame["name"].iloc[0])


def warm_up() -> None:
    """Compute the newest experiment's default views once, in the background, when the server
    starts: the first visit to the Overview (the lab's program styles, ~10 s to match), Frontier,
    Churn or pass@k then finds them cached."""
    try:
        lab = lab_experiment()
        if lab:
            lab_styles(lab)
        newest = newest_with_results()
        if newest is None:
            return
        exp = newest[0]
        findings(exp)
        frontier(exp, None, None, None, "per_problem")
        churn_order(exp, None, None, None, "difficulty")
        churn(exp, None, None, None, SOLVED_AT)
        passk_pools(exp, None, None, None)
    except Exception:  # a cold cache only costs time; the page shows any real error itself
        return


@st.cache_data(ttl=30, show_spinner=False)
def problem(problem_id: str) -> tuple[Problem | None, list[Test]]:
    store = _store(db_path())
    return store.get(Problem, problem_id), store.select(Test, {"problem_id": problem_id})


@st.cache_data(ttl=10, show_spinner=False)
def problem_samples(experiment_id: str, problem_id: str) -> tuple[list[Sample], list[Evaluation]]:
    store = _store(db_path())
    where = {"experiment_id": experiment_id, "problem_id": problem_id}
    return store.select(Sample, where), store.select(Evaluation, where)


def metrics(experiment_id: str) -> pl.DataFrame:
    return _metrics(db_path(), experiment_id)


@st.cache_data(ttl=5, show_spinner=False)
def _metrics(path: str, experiment_id: str) -> pl.DataFrame:
    rows = _store(path).select(Metric, {"experiment_id": experiment_id})
    return pl.DataFrame([dataclasses.asdict(m) for m in rows], schema={"experiment_id": pl.String, "step": pl.Int64,
                                                                       "name": pl.String, "value": pl.Float64})  # fmt: skip


def lab_experiment() -> str | None:
    return _lab_experiment(db_path())


@st.cache_data(ttl=60, show_spinner=False)
def _lab_experiment(path: str) -> str | None:
    from backend.lab.report import lab_experiment as find

    return find(_store(path))


def lab_styles(experiment: str) -> pl.DataFrame:
    return _lab_styles(db_path(), experiment)


@st.cache_data(ttl=3600, show_spinner="Matching the lab's samples against its SFT programs…")
def _lab_styles(path: str, experiment: str) -> pl.DataFrame:
    from backend.lab.styles import style_shares

    return style_shares(_store(path), experiment)


def jobs() -> list[Job]:
    """Read-only: a job whose process died is shown as failed; its row is written by resume."""
    from backend.jobs.runner import list_jobs

    return list_jobs(_store(db_path()))


def job_specs(experiment_ids: list[str]) -> dict[str, dict]:
    """experiment id → its stored spec, for the job cards' parameters (read again when a job's
    experiment is new to the cache)."""
    specs = _job_specs(db_path())
    if not set(experiment_ids) <= specs.keys():
        _job_specs.clear()
        specs = _job_specs(db_path())
    return specs


@st.cache_data(ttl=300, show_spinner=False)
def _job_specs(path: str) -> dict[str, dict]:
    # a spec never changes once stored: the Jobs page's 2 s poll then opens the database once, not twice
    return {e.id: e.spec for e in _store(path).select(Experiment)}


def experiment_picker() -> str | None:
    """The experiment select box, bound to the view's experiment (?exp= in the URL)."""
    frame = result_experiments()
    if frame.empty:
        st.info(
            "No experiment with results yet: launch a sweep on the Launch page, or run `make run` to import the miniature lab."
        )
        return None
    ids = list(frame["id"])
    wanted = view.get("exp")
    if wanted and wanted not in ids:  # a stale or mistyped link: say so rather than switch silently
        st.warning(f"No experiment {wanted!r} with results in this database; showing the newest instead.")
    names = dict(zip(frame["id"], frame["name"], strict=True))
    exp = view.bound(st.sidebar.selectbox, "exp", "Experiment", ids, default=ids[0],
                     format_func=lambda i: f"{names[i]}  ({i})")  # fmt: skip
    note = frame.set_index("id").loc[exp, "note"]
    if isinstance(note, str) and note.strip():  # a missing note is NaN or None in the frame
        st.sidebar.caption(f"**What this shows:** {note}")
    return exp


def result_experiments() -> pd.DataFrame:
    """The experiments that hold samples, newest first (a database error stops the page with one line)."""
    try:
        frame = experiments()
    except UserError as err:
        st.error(str(err))
        st.stop()
    return frame[frame["kind"].isin(EXPERIMENT_KINDS_WITH_RESULTS)]


def filters() -> dict:
    """Difficulty / setting / platform filters and the solved threshold, bound to the view."""
    out = {}
    for key, options in (("difficulty", ["all", *DIFFICULTIES]), ("setting", ["all", *SETTINGS])):
        value = view.bound(st.sidebar.selectbox, key, key.capitalize(), options, default="all")
        out[key] = None if value == "all" else value
    out["platform"] = view.bound(st.sidebar.text_input, "platform", "Platform", default="") or None
    out["solved_at"] = solved_at()
    return out


def solved_at() -> float:
    """The one "solved" control: a problem is solved by a checkpoint when at least this share of
    its samples is correct. Every page that counts solved problems reads it from here."""
    try:
        current = float(view.get("solved") or SOLVED_AT)
    except ValueError:
        current = SOLVED_AT
    view.put("solved", f"{min(1.0, max(0.05, round(current * 20) / 20)):g}")
    return view.bound(st.sidebar.slider, "solved", "Solved = pass rate at least", default=SOLVED_AT, to_text=lambda v: f"{v:g}",
                      from_text=float, min_value=0.05, max_value=1.0, step=0.05,
                      help=f"Default {SOLVED_AT:.0%}: most samples correct. Counts of solved problems on "
                           "every page use this; the lab's findings use the default.")  # fmt: skip


def averaging() -> str:
    return view.bound(st.sidebar.radio, "avg", "Averaging", ["per_problem", "per_sample"], default="per_problem",
                      format_func=lambda a: "per problem, then averaged" if a == "per_problem" else "pooled over samples")  # fmt: skip


def experiment_label(exp: str) -> str:
    """How figures name an experiment: its name (which for the lab says "miniature lab") and id."""
    names = dict(zip(experiments()["id"], experiments()["name"], strict=True))
    return f"{names.get(exp) or exp} ({exp})"


def overlay_picker(exp: str) -> list[str]:
    """Other experiments to draw on the same axes, bound to the view (?with=)."""
    frame = result_experiments()
    ids = [i for i in frame["id"] if i != exp]
    if not ids:
        return []
    names = dict(zip(frame["id"], frame["name"], strict=True))
    return view.bound(st.sidebar.multiselect, "with", "Overlay experiments", ids, default=[],
                      to_text=",".join, from_text=lambda s: [i for i in s.split(",") if i in ids],
                      format_func=lambda i: f"{names[i]}  ({i})",
                      help="Draw other experiments on the same axes: other endpoint pairs, benchmarks or settings.")  # fmt: skip


def passk_overlay(ids: list[str], f: dict) -> pl.DataFrame:
    """The pools of every experiment (passk_pools) as bands, with an `experiment` column naming
    each: the pass@k page's overlay of two or more experiments."""
    parts = []
    for exp in ids:
        try:
            pools = passk_pools(exp, f["difficulty"], f["platform"], f["setting"])
            key = tuple((name, tuple(m)) for name, m in pools.items())
            bands = passk_bands(exp, f["difficulty"], f["platform"], f["setting"], key)
        except UserError as err:
            st.warning(f"{exp}: {err}")
            continue
        parts.append(bands.with_columns(pl.lit(experiment_label(exp)).alias("experiment")))
    return pl.concat(parts) if parts else pl.DataFrame()


def frontier_tables(ids: list[str], f: dict, averaging: str) -> dict[str, pl.DataFrame]:
    """label → frontier table of each experiment that has results under these filters."""
    out = {}
    for exp in ids:
        try:
            out[experiment_label(exp)] = frontier(exp, f["difficulty"], f["platform"], f["setting"], averaging)
        except UserError as err:
            st.warning(f"{exp}: {err}")
    return out


def solved_words(at_least: float) -> str:
    return f"solved = pass rate ≥ {at_least:.0%}"


def load_outcomes(exp: str, f: dict) -> Outcomes | None:
    try:
        return outcomes(exp, f["difficulty"], f["platform"], f["setting"])
    except UserError as err:
        st.warning(str(err))
        return None


def page_header(title: str):
    """Title, experiment picker and filters; stops the page when there is nothing to show.
    Returns (experiment id, filters, outcomes)."""
    st.title(title)
    exp = experiment_picker()
    if not exp:
        st.stop()
    f = filters()
    o = load_outcomes(exp, f)
    if o is None:
        st.stop()
    return exp, f, o
