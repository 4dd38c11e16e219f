"""Cached reads for the paper's tests on the Frontier and pass@k pages (backend/analysis/recovery.py,
trend.py, frontier.format_causes) and where an experiment's seeds came from; beside data.py, on
its outcomes and store."""

from __future__ import annotations

import polars as pl
import streamlit as st

from backend.records import Experiment
from dashboard import data


@st.cache_data(ttl=30, show_spinner=False)
def format_causes(exp: str, difficulty, platform, setting, averaging: str) -> pl.DataFrame:
    """Format failures by cause and completion length per checkpoint (analysis.frontier.format_causes), labelled."""
    from backend.analysis.frontier import format_causes as by_cause

    o = data.outcomes(exp, difficulty, platform, setting)
    frame = by_cause(data._store(data.db_path()).format_causes(exp, difficulty=difficulty, platform=platform, setting=setting),
                     averaging)  # fmt: skip
    order = pl.DataFrame({"checkpoint_id": o.checkpoints, "label": o.labels, "alpha": o.alphas})
    return order.join(frame, on="checkpoint_id", how="left").drop("checkpoint_id")


@st.cache_data(show_spinner="Measuring how far independent checkpoints lie from the interpolation…")
def recovery(exp: str, difficulty, platform, setting) -> list[dict]:
    from backend.analysis.recovery import recovery as measure

    return measure(data.outcomes(exp, difficulty, platform, setting))


@st.cache_data(show_spinner="Testing the trend along α…")
def trend(exp: str, difficulty, platform, setting) -> dict:
    from backend.analysis.trend import trend as test

    return test(data.outcomes(exp, difficulty, platform, setting))


def shares_seeds(exp: str) -> bool:
    """Whether the experiment's checkpoints drew common seeds (sample k of problem i: the same
    sampling noise at every checkpoint): its stored spec says so, as do sweeps and evals stored
    before the option existed."""
    from backend.sweep.spec import stored_spec

    row = data._store(data.db_path()).get(
        Experiment, exp
    )  # one row by key: cheap enough not to cache past a spec change
    return bool(row and row.spec and stored_spec(row.kind, row.spec).get("common_seeds", False))
