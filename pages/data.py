"""Cached data access for the pages: thin calls into backend.store (no SQL here)."""

from __future__ import annotations

import dataclasses

import pandas as pd
import streamlit as st

from backend.records import Experiment
from backend.store import Store, default_db_path


def db_path() -> str:
    return str(default_db_path())


def store() -> Store:
    # The dashboard never migrates or writes implicitly: `make run` migrated already.
    return Store(default_db_path(), migrate=False)


@st.cache_data(ttl=5, show_spinner=False)
def experiments() -> pd.DataFrame:
    rows = [dataclasses.asdict(e) for e in store().select(Experiment, order_by="created_at DESC")]
    columns = ["id", "kind", "name", "note", "status", "created_at"]
    return pd.DataFrame(rows, columns=[*columns, "spec"])[columns]
