"""Cached data access for the pages: thin calls into backend (no SQL here).

An experiment's results come as one read model, `experiment_view` (dashboard/experiment_view.py);
the sidebar controls live in dashboard/controls.py, the view state in dashboard/view.py.
"""

from __future__ import annotations

import atexit
import dataclasses
import threading
from pathlib import Path

import pandas as pd
import polars as pl
import streamlit as st

from backend.alpha import alpha_text
from backend.records import Checkpoint, Evaluation, Experiment, Job, Metric, Problem, Sample, Test
from backend.store import Store, default_db_path
from backend.store_queries import EVERY_SAMPLE, SampleFilter
from backend.vocab import SOLVED_AT
from dashboard.experiment_view import ExperimentView, stamp

EXPERIMENT_KINDS_WITH_RESULTS = ("sweep", "eval", "rollout", "import")  # the kinds whose experiments hold samples


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
    frame["α grid"] = [", ".join(map(alpha_text, (s or {}).get("alphas", []))) for s in frame["spec"]]
    frame["setting"] = [(s or {}).get("setting", "") for s in frame["spec"]]
    frame["samples per problem"] = [(s or {}).get("n") for s in frame["spec"]]
    # experiments stored before prompt_format existed were all sampled with the chat template
    frame["prompt format"] = [(s or {}).get("prompt_format", "chat") if s else "" for s in frame["spec"]]
    return frame[[*columns, "α grid", "setting", "samples per problem", "prompt format"]]


def experiment_view(exp: str, filters: SampleFilter = EVERY_SAMPLE) -> ExperimentView:
    """The read model of one experiment under these filters, as of its latest evaluation: built
    again as soon as a row lands (the stamp changes), kept while nothing changes."""
    path = db_path()
    return _experiment_view(path, exp, filters, stamp(path, exp))


# views are large and immutable: shared by reference (cache_resource), never pickled per call
@st.cache_resource(max_entries=24, show_spinner="Aggregating outcomes…")
def _experiment_view(path: str, exp: str, filters: SampleFilter, at: tuple[int, int]) -> ExperimentView:
    return ExperimentView(path, exp, filters, at)


def problem_dates(exp: str, f: SampleFilter = EVERY_SAMPLE) -> dict:
    """How many of the experiment's problems (under the filters but the window) have a contest date,
    how many have none, and the first and last date (Store.problem_dates)."""
    return _problem_dates(db_path(), exp, f.difficulty, f.platform, f.setting)


@st.cache_data(ttl=30, show_spinner=False)
def _problem_dates(path: str, exp: str, difficulty, platform, setting) -> dict:
    where = SampleFilter(difficulty=difficulty, platform=platform, setting=setting)
    return _store(path).problem_dates(exp, where)


def newest_with_results() -> tuple[str, str] | None:
    """(id, name) of the newest experiment that has results, which pages open by default."""
    frame = experiments()
    frame = frame[frame["kind"].isin(EXPERIMENT_KINDS_WITH_RESULTS)]
    return None if frame.empty else (frame["id"].iloc[0], frame["name"].iloc[0])


_exiting = threading.Event()


def start_warm_up() -> None:
    """warm_up in a daemon thread that the interpreter's exit stops between steps and waits for: a
    daemon thread still inside a DuckDB call when Python finalizes is unwound through DuckDB's C++
    and aborts the whole process (SIGABRT, "exception not rethrown")."""
    thread = threading.Thread(target=warm_up, name="flab-warm-up", daemon=True)
    thread.start()

    def stop() -> None:
        _exiting.set()
        thread.join(timeout=120)

    atexit.register(stop)


def warm_up() -> None:
    """Compute the newest experiment's default views once, in the background, when the server
    starts: the first visit to the Overview (the lab's program styles, ~10 s to match), Frontier,
    Churn or pass@k then finds them cached."""
    try:
        lab = lab_experiment()
        if lab and not _exiting.is_set():
            lab_styles(lab)
        newest = newest_with_results()
        if newest is None:
            return
        v = experiment_view(newest[0])
        steps = (
            v.findings,
            lambda: v.frontier("per_problem"),
            lambda: v.order("difficulty"),
            lambda: v.churn(SOLVED_AT),
            v.pools,
            v.tiers,
            lambda: v.format_causes("per_problem"),
        )
        for step in steps:
            if _exiting.is_set():
                return
            step()
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
    return pl.DataFrame(
        [dataclasses.asdict(m) for m in rows],
        schema={"experiment_id": pl.String, "step": pl.Int64, "name": pl.String, "value": pl.Float64},
    )


def lab_experiment() -> str | None:
    return _lab_experiment(db_path())


@st.cache_data(ttl=60, show_spinner=False)
def _lab_experiment(path: str) -> str | None:
    from backend.lab.report import lab_experiment as find

    return find(_store(path))


def lab_tests(experiment: str) -> list[dict]:
    """The lab build's pre-registered tests (withheld vs kept set); [] for a build without them."""
    return _lab_tests(db_path(), experiment)


@st.cache_data(ttl=3600, show_spinner=False)
def _lab_tests(path: str, experiment: str) -> list[dict]:
    from backend.lab.report import lab_manifest, preregistered_tests

    manifest = lab_manifest()
    if manifest is None or manifest["sweep_experiment"] != experiment:
        return []
    return preregistered_tests(_store(path).outcome_counts(experiment), manifest)


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


def experiment_label(exp: str) -> str:
    """How figures name an experiment: its name (which for the lab says "miniature lab") and id."""
    names = dict(zip(experiments()["id"], experiments()["name"], strict=True))
    return f"{names.get(exp) or exp} ({exp})"
