"""The disk a merge needs, known before anything is written: a merged folder holds every tensor of
its first input in the output dtype, and the files it copies from that input (config, tokenizer,
chat templates). A 7B model is 15.2 GB per folder in bf16, 30.5 GB in float32."""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path
from typing import TYPE_CHECKING

from backend.errors import UserError

if TYPE_CHECKING:  # torch loads with a merge, not with a node's preflight (which reports a missing torch)
    from backend.merge.spec import Merge

HOST = socket.gethostname()  # a partial folder's node: only that node may reap it (merge/cache.py)


def default_root() -> Path:
    """The merge cache: FLAB_MERGE_CACHE, else FLAB_CACHE/merges (FLAB_CACHE: ~/.cache/frontier-lab)."""
    base = os.environ.get("FLAB_CACHE", Path.home() / ".cache" / "frontier-lab")
    return Path(os.environ.get("FLAB_MERGE_CACHE", Path(base) / "merges"))


def budget_bytes() -> int:
    """What the merge cache keeps once no running sweep pins its folders: FLAB_MERGE_CACHE_GB (100)."""
    return int(float(os.environ.get("FLAB_MERGE_CACHE_GB", "100")) * (1 << 30))


def out_dtype(spec: Merge, dtype: str, is_float: bool) -> str:
    """The safetensors dtype a tensor of `dtype` is written in."""
    import torch

    from backend.merge.io import ST_NAMES

    if not is_float or spec.dtype == "auto":
        return dtype
    return ST_NAMES[getattr(torch, spec.dtype)]


def merged_bytes(spec: Merge) -> int:
    """Bytes of the folder this merge writes: tensors × their output dtype's size, plus copied files."""
    from backend.merge.io import ST_DTYPES, CheckpointFolder, aux_files

    first = CheckpointFolder(spec.models[0])
    try:
        tensors = sum(
            info.numel * ST_DTYPES[out_dtype(spec, info.dtype, info.is_float)].itemsize
            for info in first.tensors.values()
        )
    finally:
        first.close()
    copied = sum((Path(spec.models[0]) / name).stat().st_size for name in aux_files(spec.models[0]))
    return tensors + copied


def free_bytes(folder: Path) -> int:
    """Free bytes on the filesystem that holds `folder` (its nearest existing ancestor)."""
    here = Path(folder).absolute()
    while not here.exists():
        here = here.parent
    return shutil.disk_usage(here).free


def gb(n: int) -> str:
    """Bytes as GB: three significant digits (a test's 0.00196 GB), whole GB from 1,000 up (3,100 GB)."""
    return f"{n / 1e9:.3g} GB" if n < 1e12 else f"{n / 1e9:,.0f} GB"


def require_room(folder: Path, need: int, what: str, advice: str) -> None:
    """One line, before anything is written, when `need` bytes do not fit where `folder` is."""
    free = free_bytes(folder)
    if need > free:
        raise UserError(f"no space for {what} under {folder}: {gb(need)} needed, {gb(free)} free; {advice}")


def partial_folder(out: Path, pid: int) -> Path:
    """Where a merge writes before its rename into `out`: hidden, named by this node and process."""
    return out.parent / f".{out.name}.partial-{HOST}-{pid}"


def partial_owner(partial: Path) -> tuple[str | None, int | None]:
    """(node, pid) of a partial folder's merge; node None for a folder named before partials carried
    their node (`.KEY.partial-PID`), pid None for a name that is not a partial's."""
    tail = partial.name.rpartition(".partial-")[2]
    host, _, pid = tail.rpartition("-")
    if not pid.isdigit():
        return None, None
    return host or None, int(pid)
