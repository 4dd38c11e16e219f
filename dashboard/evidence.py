"""Where an experiment's seeds came from, for the pass@k page (the paper's tests themselves are parts
of the experiment's read model, dashboard/experiment_view.py)."""

from __future__ import annotations

from backend.records import Experiment
from dashboard import data


def shares_seeds(exp: str) -> bool:
    """Whether the experiment's checkpoints drew common seeds (sample k of problem i: the same
    sampling noise at every checkpoint): its stored spec says so, as do sweeps and evals stored
    before the option existed."""
    from backend.sweep.spec import stored_spec

    row = data._store(data.db_path()).get(Experiment, exp)  # one row by key: cheap, never stale
    return bool(row and row.spec and stored_spec(row.kind, row.spec).get("common_seeds", False))
