"""Checkpoint folders as `checkpoints` rows: one id per content, whoever registers it; the id
formulas of trained and merged checkpoints live here and nowhere else."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from backend.records import Checkpoint

if TYPE_CHECKING:  # duckdb loads with the store a command opens, not with a spec module
    from backend.store import Store


def checkpoint_id(content_hash: str) -> str:
    return f"ckpt-{content_hash[:16]}"


def merged_id(merge_key: str) -> str:
    """A merged point's id from its merge key (inputs' content + α): the same for a merged folder
    and for a live α switch, so both modes of one sweep share their rows."""
    return f"merged-{merge_key[:16]}"


def ensure_registered(store: Store, path: str | Path, kind: str = "trained", label: str | None = None) -> Checkpoint:
    """The row for a checkpoint folder, created on first sight (keyed by its content hash)."""
    # merge.io reads safetensors with torch: imported here, so that the CLI's spec modules stay light
    from backend.hub import checkpoint_label
    from backend.merge.io import CheckpointFolder, content_hash

    digest = content_hash(CheckpointFolder(path))
    row = store.get(Checkpoint, checkpoint_id(digest))
    if row is None:
        row = Checkpoint(
            id=checkpoint_id(digest),
            path=str(path),
            kind=kind,
            content_hash=digest,
            label=label or checkpoint_label(path),
        )
        store.put([row])
    return row
