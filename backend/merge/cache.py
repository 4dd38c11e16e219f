"""Content-addressed merge cache: outputs keyed by (input hashes, weights, dtype) and the files a
merged folder copies from its first input (tokenizer, chat template, generation config), LRU-evicted
under a disk budget (a 7B model is ~15 GB per α), and registered as `checkpoints` rows."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import psutil

from backend.merge import checkpoints
from backend.merge.engine import sweep
from backend.merge.io import CheckpointFolder, content_hash, copied_files_hash
from backend.merge.methods import DEFAULT as DEFAULT_METHOD
from backend.merge.spec import Merge
from backend.records import Checkpoint as CheckpointRow
from backend.store import Store

USED_STAMP = ".last_used"


def default_root() -> Path:
    base = os.environ.get("FLAB_CACHE", Path.home() / ".cache" / "frontier-lab")
    return Path(os.environ.get("FLAB_MERGE_CACHE", Path(base) / "merges"))


def merge_key(input_hashes: list[str], spec: Merge) -> str:
    payload = {"inputs": input_hashes, "weights": spec.weights, "dtype": spec.dtype}
    if spec.method != DEFAULT_METHOD:  # keys made before methods existed (all linear) stay valid
        payload["method"] = spec.method
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def folder_key(input_hashes: list[str], spec: Merge, copied: str) -> str:
    """A merge's cache folder: its merge key (the weights' identity, which names its checkpoint
    row) and `copied`, the hash of the files it copies from its first input, which change how the
    merged checkpoint prompts without changing its weights."""
    return hashlib.sha256(f"{merge_key(input_hashes, spec)}|{copied}".encode()).hexdigest()


def folder_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


class MergeCache:
    def __init__(self, root: str | Path | None = None, budget_bytes: int | None = None):
        self.root = Path(root) if root else default_root()
        gb = float(os.environ.get("FLAB_MERGE_CACHE_GB", "100"))
        self.budget = budget_bytes if budget_bytes is not None else int(gb * (1 << 30))

    def get(self, specs: list[Merge], **sweep_kw) -> list[Path]:
        """Folders holding each spec's merge; the missing ones are made in one pass."""
        hashes = [content_hash(CheckpointFolder(m)) for m in specs[0].models]
        copied = copied_files_hash(specs[0].models[0])
        keys = [folder_key(hashes, s, copied) for s in specs]
        paths = [self.root / k for k in keys]
        missing = [i for i, p in enumerate(paths) if not (p / "merge.json").is_file()]
        if missing:
            self.reap_partials()
            sweep([specs[i] for i in missing], [paths[i] for i in missing], overwrite=True, **sweep_kw)
        for p in paths:
            (p / USED_STAMP).touch()
        self.evict(keep=set(keys))
        return paths

    def reap_partials(self) -> list[Path]:
        """Remove the hidden `.KEY.partial-PID` folders of merges whose process is gone (a kill -9
        mid-write leaves one; it was never renamed into place, so no sweep ever used it)."""
        removed = []
        for d in self.root.glob(".*.partial-*"):
            pid = d.name.rpartition("-")[2]
            if pid.isdigit() and not psutil.pid_exists(int(pid)):
                shutil.rmtree(d, ignore_errors=True)
                removed.append(d)
        return removed

    def entries(self) -> list[tuple[float, int, Path]]:
        """(last used, bytes, folder), least recently used first."""
        out = []
        for d in self.root.glob("*"):
            if d.is_dir() and not d.name.startswith("."):
                stamp = d / USED_STAMP
                out.append((stamp.stat().st_mtime if stamp.exists() else 0.0, folder_bytes(d), d))
        return sorted(out)

    def evict(self, keep: set[str] = frozenset()) -> list[Path]:
        entries = self.entries()
        total = sum(size for _, size, _ in entries)
        removed = []
        for _, size, folder in entries:
            if total <= self.budget:
                break
            if folder.name in keep:
                continue
            shutil.rmtree(folder, ignore_errors=True)
            total -= size
            removed.append(folder)
        return removed


def register_live_switch(store: Store, low: str, high: str, spec: Merge) -> CheckpointRow:
    """A live α switch's point as a `checkpoints` row (path `live:LOW|HIGH`, no folder): the id a disk
    merge of the same spec gets, so both modes of one sweep share their rows; its endpoints registered too."""
    hashes = [content_hash(CheckpointFolder(low)), content_hash(CheckpointFolder(high))]
    ends = [checkpoints.ensure_registered(store, p).id for p in (low, high)]
    path = f"{checkpoints.LIVE_PREFIX}{low}|{high}"
    return checkpoints.merged(store, merge_key(hashes, spec), path, spec, ends, CheckpointFolder(low).model_type)


def register_merged(store: Store, folder: Path, spec: Merge) -> CheckpointRow:
    """A merged folder as a `checkpoints` row, with its endpoints (registered too if new) and α.
    An existing row with the same content is returned as it is, never rewritten."""
    record = json.loads((folder / "merge.json").read_text())
    hashes = [i["hash"] for i in record["inputs"]]
    ends = [checkpoints.trained(store, i["path"], h).id for i, h in zip(record["inputs"], hashes, strict=True)]
    model_type = json.loads((folder / "config.json").read_text()).get("model_type")
    return checkpoints.merged(store, merge_key(hashes, spec), str(folder), spec, ends, model_type)
