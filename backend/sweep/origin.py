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
    """The experiment whose problems these checkpoints were measured on: of the sweeps and evals that
    sampled one of them, the one that drew the most samples per checkpoint (the newest of equals),
    else the experiment that trained one (an RL run, on its own problems). Not simply the newest: a
    two-sample smoke sweep of the lab's endpoints would make its 16 tokens and one problem every
    later form's defaults, where the lab's own sweep (384 tokens, 16 samples) is the recipe."""
    wanted = {_resolved(f) for f in folders if f}
    if not wanted:
        return None
    experiments = store.select(Experiment, newest_first=True)
    measuring = [e for e in experiments if e.kind in MEASURING_KINDS and e.spec and spec_folders(e.spec) & wanted]
    if measuring:
        return max(measuring, key=samples_per_checkpoint)  # max keeps the first (newest) of equals
    trained_by = {c.experiment_id for c in store.select(Checkpoint) if c.experiment_id and _resolved(c.path) in wanted}
    return next((e for e in experiments if e.id in trained_by and e.spec and e.spec.get("bench")), None)


def samples_per_checkpoint(exp: Experiment) -> int:
    """How many samples a stored sweep or eval asked of each checkpoint: n × its problems (picked, or
    at most `limit`; a whole benchmark counts as more than any pick)."""
    spec = exp.spec or {}
    problems = len(spec.get("problems") or []) or 10**6
    if spec.get("limit"):
        problems = min(problems, int(spec["limit"]))
    return int(spec.get("n") or 1) * problems


def startable(store: Store, kind: str) -> list[Experiment]:
    """Stored experiments of this kind whose spec a form can start from, newest first."""
    return [e for e in store.select(Experiment, {"kind": kind}, newest_first=True) if e.spec]
