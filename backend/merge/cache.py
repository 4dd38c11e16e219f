"""Content-addressed merge cache: outputs keyed by (input hashes, weights, dtype) and the files a
merged folder copies from its first input (tokenizer, chat template, generation config), LRU-evicted
under a disk budget (a 7B model is ~15 GB per α) except while a running sweep pins them, and
registered as `checkpoints` rows. The cache may be shared by the nodes of a Ray cluster: pins are
files beside the folders, and a half-written folder is reaped only by the node that wrote it."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import psutil

from backend.merge import checkpoints
from backend.merge.engine import sweep
from backend.merge.io import CheckpointFolder, content_hash, copied_files_hash
from backend.merge.methods import DEFAULT as DEFAULT_METHOD
from backend.merge.space import HOST, default_root, merged_bytes, partial_owner, require_room
from backend.merge.space import budget_bytes as default_budget
from backend.merge.spec import Merge
from backend.records import Checkpoint as CheckpointRow
from backend.store import Store

USED_STAMP = ".last_used"
PINS = ".pins"  # one file per running sweep: the folders no eviction may remove


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
    """Merged folders under `root`, one per folder key. A running sweep pins its folders (a pin file
    per job under .pins/), and every eviction, in any process on any node, keeps pinned folders: the
    budget bounds what stays once the sweeps that use them end (`keep_merges`), never a sweep's own."""

    def __init__(self, root: str | Path | None = None, budget_bytes: int | None = None):
        self.root = Path(root) if root else default_root()
        self.budget = budget_bytes if budget_bytes is not None else default_budget()

    def paths(self, specs: list[Merge]) -> list[Path]:
        """The folder each spec's merge has (or will have) in this cache."""
        hashes = [content_hash(CheckpointFolder(m)) for m in specs[0].models]
        copied = copied_files_hash(specs[0].models[0])
        return [self.root / folder_key(hashes, s, copied) for s in specs]

    def get(self, specs: list[Merge], **sweep_kw) -> list[Path]:
        """Folders holding each spec's merge; the missing ones are made in one pass."""
        paths = self.paths(specs)
        missing = [i for i, p in enumerate(paths) if not (p / "merge.json").is_file()]
        if missing:
            self.reap_partials()
            sweep([specs[i] for i in missing], [paths[i] for i in missing], overwrite=True, **sweep_kw)
        for p in paths:
            (p / USED_STAMP).touch()
        self.evict(keep={p.name for p in paths})
        return paths

    def require_room(self, specs: list[Merge]) -> None:
        """Before a sweep's first merge: its missing folders fit the cache's filesystem, or one line."""
        paths = self.paths(specs)
        missing = [s for s, p in zip(specs, paths, strict=True) if not (p / "merge.json").is_file()]
        if missing:
            require_room(
                self.root,
                merged_bytes(missing[0]) * len(missing),
                f"the sweep's {len(missing)} merged folder{'s' if len(missing) > 1 else ''}",
                "try --live-switch (no folders), --merge-dtype bfloat16, or FLAB_CACHE (or FLAB_MERGE_CACHE) "
                "on a bigger disk",
            )

    def reap_partials(self) -> list[Path]:
        """Remove the hidden `.KEY.partial-HOST-PID` folders of merges that died mid-write (a kill -9
        leaves one; it was never renamed into place, so no sweep ever used it). Only this node can
        tell whether its PID still runs: another node's partial is that node's to reap."""
        removed = []
        for d in self.root.glob(".*.partial-*"):
            host, pid = partial_owner(d)
            if pid is not None and host in (None, HOST) and not psutil.pid_exists(pid):
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
        """Least recently used folders first, until the cache fits its budget; `keep` and every
        running sweep's pinned folders stay."""
        keep = set(keep) | self.pinned()
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

    # pins: one file per running job, .pins/JOB.json = {"host", "pid", "folders"}

    def pin(self, job_id: str, paths: list[Path]) -> None:
        pins = self.root / PINS
        pins.mkdir(parents=True, exist_ok=True)
        record = {"host": HOST, "pid": os.getpid(), "folders": sorted(p.name for p in paths)}
        tmp = pins / f".{job_id}.{HOST}-{os.getpid()}.tmp"
        tmp.write_text(json.dumps(record))
        os.replace(tmp, pins / f"{job_id}.json")  # whole or absent: a reader never sees half a pin

    def unpin(self, job_id: str) -> None:
        (self.root / PINS / f"{job_id}.json").unlink(missing_ok=True)

    def pinned(self) -> set[str]:
        """Folder names pinned by running jobs. A pin whose job ran on this node
        and whose process is gone is stale: it is removed. Another node's pin stays until its job
        ends or resumes (only that node can tell whether it still runs)."""
        folders: set[str] = set()
        for pin in (self.root / PINS).glob("*.json"):
            try:
                record = json.loads(pin.read_text())
            except (OSError, ValueError):
                continue  # removed (its job ended) while this looked
            if record.get("host") == HOST and not psutil.pid_exists(record.get("pid", 0)):
                pin.unlink(missing_ok=True)
                continue
            folders |= set(record.get("folders", ()))
        return folders

    def release(self, job_id: str, paths: list[Path], keep: str) -> list[Path]:
        """After a sweep: what stays of its folders (keep_merges) and its pin gone. budget: the
        cache evicts down to its budget, least recently used first; all: every folder stays (a
        later merge may evict them); none: the sweep's folders go, unless another job pins them."""
        self.unpin(job_id)
        if keep == "all":
            return []
        if keep == "budget":
            return self.evict()
        removed = []
        others = self.pinned()
        for folder in paths:
            if folder.name not in others and folder.is_dir():
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder)
        return removed


@contextlib.contextmanager
def pinned_sweep(job_id: str, specs: list[Merge], keep: str) -> Iterator[None]:
    """A disk sweep's merged folders, from before its first merge to its end: their room checked
    (one line naming both numbers when they do not fit), pinned against every eviction while the
    sweep runs, then kept as `keep` says (SweepSpec.keep_merges). A sweep that fails keeps its
    folders (its resume reuses them) and drops its pin."""
    if not specs:  # a live α switch writes no folders
        yield
        return
    cache = MergeCache()
    cache.require_room(specs)
    paths = cache.paths(specs)
    cache.pin(job_id, paths)
    try:
        yield
    except BaseException:
        cache.unpin(job_id)
        raise
    cache.release(job_id, paths, keep)


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
