"""Checkpoint folders as `checkpoints` rows: one id per content, whoever registers it; the id
formulas of trained and merged checkpoints, and the one writer of their rows (`register`), live
here and nowhere else (tests/merge/test_checkpoint_rows.py checks that no other module builds one)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from backend.alpha import alpha_label
from backend.hub import checkpoint_label
from backend.records import Checkpoint

if TYPE_CHECKING:  # duckdb loads with the store a command opens, not with a spec module
    import pyarrow as pa

    from backend.merge.spec import Merge
    from backend.store import Store

LIVE_PREFIX = "live:"  # a live α switch's path: live:LOW|HIGH (no folder holds its weights)


def checkpoint_id(content_hash: str) -> str:
    return f"ckpt-{content_hash[:16]}"


def merged_id(merge_key: str) -> str:
    """A merged point's id from its merge key (inputs' content + α): the same for a merged folder
    and for a live α switch, so both modes of one sweep share their rows."""
    return f"merged-{merge_key[:16]}"


def ensure_registered(store: Store, path: str | Path, kind: str = "trained", label: str | None = None) -> Checkpoint:
    """The row for a checkpoint folder, created on first sight (keyed by its content hash)."""
    # merge.io reads safetensors with torch: imported here, so that the CLI's spec modules stay light
    from backend.merge.io import CheckpointFolder, content_hash

    return trained(store, str(path), content_hash(CheckpointFolder(path)), kind, label)


def relabel(store: Store, row: Checkpoint, label: str | None) -> Checkpoint:
    """The row named as a spec names it (R_4=runs/r4): a checkpoint first seen under its folder name
    takes the label the user gave it now."""
    if label and row.label != label:
        store.update(Checkpoint, (row.id,), label=label)
        row = store.get(Checkpoint, row.id)
    return row


def register(store: Store, row: Checkpoint) -> Checkpoint:
    """Write a checkpoint row unless one with its id (its content) is there already, and return the
    stored one: a row another experiment registered keeps its own location (a live switch's `live:`
    path, another cache folder) and its label."""
    store.put([row], replace=False)
    return store.get(Checkpoint, row.id)


def trained(store: Store, path: str, digest: str, kind: str = "trained", label: str | None = None) -> Checkpoint:
    """The row of a folder whose content hash is known (a merge's recorded input, or a folder just hashed)."""
    return register(
        store,
        Checkpoint(
            id=checkpoint_id(digest), path=path, kind=kind, content_hash=digest, label=label or checkpoint_label(path)
        ),
    )


def merged(store: Store, key: str, path: str, spec: Merge, ends: list[str], model_type: str | None) -> Checkpoint:
    """The row of a merged point, a folder or a live α switch (`live:low|high`): both get the same
    id from the merge key; `ends` are the ids of the spec's input checkpoints."""
    alpha = spec.alpha
    return register(
        store,
        Checkpoint(
            id=merged_id(key),
            path=path,
            kind="merged",
            label=alpha_label(alpha) if alpha is not None else "merge",
            low_id=ends[0] if alpha is not None else None,
            high_id=ends[1] if alpha is not None else None,
            alpha=alpha,
            weights=dict(zip(spec.models, spec.weights, strict=True)),
            content_hash=key,
            model_type=model_type,
        ),
    )


def external(store: Store, label: str, alpha: float | None = None, ends: list[str] | None = None) -> Checkpoint:
    """The row of a checkpoint known by name only (samples imported from elsewhere: a hub name or a
    free label, no weights read): its id from the name, an α point's from its α and endpoints' ids
    too; an α point is `merged`, with its α and endpoints, so the pages place it on the α axis."""
    import hashlib
    import json

    digest = hashlib.sha256(json.dumps([label, alpha, ends]).encode()).hexdigest()
    if alpha is None:
        return register(store, Checkpoint(id=f"ext-{digest[:16]}", path=label, kind="trained", label=label))
    low, high = ends or (None, None)
    return register(
        store,
        Checkpoint(
            id=f"ext-{digest[:16]}", path=label, kind="merged", label=alpha_label(alpha), low_id=low, high_id=high,
            alpha=alpha,
        ),
    )  # fmt: skip


def import_rows(store: Store, table: pa.Table) -> int:
    """Rows written elsewhere (the lab's committed checkpoints.parquet), under `register`'s
    never-rewrite rule: a checkpoint already stored keeps its row, the others are added. Returns the
    number of rows in the table."""
    return store.put_arrow(Checkpoint, table, replace=False)
