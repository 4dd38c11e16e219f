"""Checkpoint folders as `checkpoints` rows: one id per content, whoever registers it."""

from __future__ import annotations

from pathlib import Path

from backend.records import Checkpoint
from backend.store import Store


def checkpoint_id(content_hash: str) -> str:
    return f"ckpt-{content_hash[:16]}"


def ensure_registered(store: Store, path: str | Path, kind: str = "trained", label: str | None = None) -> Checkpoint:
    """The row for a checkpoint folder, created on first sight (keyed by its content hash)."""
    from backend.merge.io import Checkpoint as Folder
    from backend.merge.io import content_hash

    digest = content_hash(Folder(path))
    row = store.get(Checkpoint, checkpoint_id(digest))
    if row is None:
        row = Checkpoint(
            id=checkpoint_id(digest), path=str(path), kind=kind, content_hash=digest, label=label or Path(path).name
        )
        store.put([row])
    return row
