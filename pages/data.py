"""Cached data access for the pages: thin calls into backend.store (no SQL here)."""

from __future__ import annotations

import dataclasses

import pandas as pd
import streamlit as st

from backend.records import Experiment
from backend.store import Store, default_db_path


def db_path() -> str:
    return str(default_db_path())


def _store(path: str) -> Store:
    # The dashboard never migrates or writes implicitly: `make run` migrated already.
    return Store(path, migrate=False)


def experiments() -> pd.DataFrame:
    return _experiments(db_path())


@st.cache_data(ttl=5, show_spinner=False)
def _experiments(path: str) -> pd.DataFrame:
    rows = [dataclasses.asdict(e) for e in _store(path).select(Experiment, order_by="created_at DESC")]
    columns = ["id", "kind", "name", "note", "status", "created_at"]
    return pd.DataFrame(rows, columns=[*columns, "spec"])[columns]
