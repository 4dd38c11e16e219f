"""What a new sweep or eval starts from: the problems its checkpoints were measured on, and the
stored specs a form can start from (the Launch page's defaults)."""

from __future__ import annotations

from pathlib import Path

from backend.records import Checkpoint, Experiment
from backend.store import Store

MEASURING_KINDS = ("sweep", "eval")  # experiments that sample and judge checkpoints
FOLDER_FIELDS = ("low", "high", "base")  # a spec's single-folder fields; "independent" and "checkpoints" are lists


def spec_folders(spec: dict) -> set[str]:
    """Every checkpoint folder a stored spec names (sweep endpoints and independents, eval checkpoints, RL base)."""
    folders = (
        [spec.get(f) for f in FOLDER_FIELDS] + list(spec.get("independent") or []) + list(spec.get("checkpoints") or [])
    )
    return {_resolved(f) for f in folders if f}


def _resolved(folder: str) -> str:
    return str(Path(folder).expanduser().resolve())


def measured_on(store: Store, folders: list[str]) -> Experiment | None:
    """The experiment whose problems these checkpoints were measured on: the newest sweep or eval that
    sampled one of them, else the experiment that trained one (an RL run, on its own problems)."""
    wanted = {_resolved(f) for f in folders if f}
    if not wanted:
        return None
    experiments = store.select(Experiment, newest_first=True)
    for exp in experiments:
        if exp.kind in MEASURING_KINDS and exp.spec and spec_folders(exp.spec) & wanted:
            return exp
    trained_by = {c.experiment_id for c in store.select(Checkpoint) if c.experiment_id and _resolved(c.path) in wanted}
    return next((e for e in experiments if e.id in trained_by and e.spec and e.spec.get("bench")), None)


def startable(store: Store, kind: str) -> list[Experiment]:
    """Stored experiments of this kind whose spec a form can start from, newest first."""
    return [e for e in store.select(Experiment, {"kind": kind}, newest_first=True) if e.spec]
