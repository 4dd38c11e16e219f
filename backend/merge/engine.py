"""The streaming merge: each spec's method (backend/merge/methods/) in float32, cast back, for one
spec or K specs in one pass.

Tensors are processed in flat chunks, so memory stays near chunk × (inputs + outputs) in flight
even for a large embedding. A reader thread prefetches the next chunk (mmap), torch does the
arithmetic on both cores, and a writer thread streams the previous chunk's outputs to disk.
Outputs go to a hidden partial folder that is renamed into place only when everything is
written, so an error leaves no output folder behind.
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import math
import os
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import torch
from tqdm import tqdm

from backend.errors import UserError
from backend.merge import methods
from backend.merge.io import (
    ST_DTYPES,
    CheckpointFolder,
    OutTensor,
    ShardWriter,
    TensorInfo,
    content_hash,
    copy_aux_files,
    plan_shards,
)
from backend.merge.space import merged_bytes, out_dtype, partial_folder, require_room
from backend.merge.spec import SHARD_BYTES, Merge

CHUNK_ELEMS = 4 << 20  # 16 MB of float32 per input per chunk


@dataclass
class MergeResult:
    out: Path
    spec: Merge
    input_hashes: list[str]
    seconds: float
    nonfinite: list[str] = field(default_factory=list)


def _reuse_freed_memory() -> None:
    """Chunks of tens of MB are allocated and freed thousands of times; by default glibc maps and
    unmaps each one, and page-faulting fresh memory then costs more than the arithmetic. Keeping
    freed blocks in the heap makes every later chunk reuse already-mapped pages."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 1 << 30)  # M_MMAP_THRESHOLD: serve blocks up to 1 GB from the heap
        libc.mallopt(-1, 4 << 30)  # M_TRIM_THRESHOLD: keep up to 4 GB of freed heap mapped
    except (OSError, AttributeError):
        pass  # not glibc: correct, only slower


def merge(spec: Merge, out: str | Path, **kw) -> MergeResult:
    return sweep([spec], [out], **kw)[0]


def validate(ckpts: list[CheckpointFolder]) -> list[str]:
    """Tensor names in write order, after checking architecture, names, shapes and dtype families."""
    first = ckpts[0]
    for c in ckpts[1:]:
        if c.model_type != first.model_type:
            raise UserError(
                f"architecture mismatch: {first.folder} is {first.model_type!r}, {c.folder} is {c.model_type!r}"
            )
    names = list(first.tensors)
    names += [n for c in ckpts[1:] for n in c.tensors if n not in first.tensors and n not in names]
    for name in names:
        infos = []
        for c in ckpts:
            try:
                infos.append(c.resolve(name))
            except KeyError:
                raise UserError(f"{c.folder} is missing tensor {name} (present in {first.folder})") from None
        ref = infos[0]
        for c, info in zip(ckpts[1:], infos[1:], strict=True):
            if info.shape != ref.shape:
                raise UserError(
                    f"tensor {name}: shape {list(info.shape)} in {c.folder} vs {list(ref.shape)} in {first.folder}"
                )
            if info.is_float != ref.is_float:
                raise UserError(f"tensor {name}: dtype {info.dtype} in {c.folder} vs {ref.dtype} in {first.folder}")
    return names


def _out_dtype(spec: Merge, info: TensorInfo) -> str:
    return out_dtype(spec, info.dtype, info.is_float)


def sweep(
    specs: list[Merge],
    outs: list[str | Path],
    *,
    device: str = "cpu",
    shard_bytes: int = SHARD_BYTES,
    chunk_elems: int = CHUNK_ELEMS,
    overwrite: bool = False,
    progress: bool = True,
) -> list[MergeResult]:
    """K merges of the same inputs in one pass: every input chunk is read once."""
    start = time.perf_counter()
    _reuse_freed_memory()
    if len(specs) != len(outs) or not specs:
        raise UserError("a sweep needs one output folder per merge spec")
    if any(s.models != specs[0].models for s in specs):
        raise UserError("a one-pass sweep needs the same input checkpoints in every spec")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise UserError("--device cuda asked for, but torch sees no CUDA device")
    outs = [Path(o) for o in outs]
    for out in outs:
        if out.exists() and any(out.iterdir()) and not overwrite:
            raise UserError(f"output folder {out} exists and is not empty; remove it or pass --overwrite")
    folders = "the merge" if len(specs) == 1 else f"{len(specs)} merges"
    require_room(outs[0].parent, sum(map(merged_bytes, specs)), folders, "free space or write elsewhere")
    ckpts = [CheckpointFolder(m) for m in specs[0].models]
    names = validate(ckpts)
    hashes = [content_hash(c) for c in ckpts]
    infos = {n: [c.resolve(n) for c in ckpts] for n in names}
    partials = [partial_folder(o, os.getpid()) for o in outs]
    created = _missing_folders([o.parent for o in outs])  # made here: removed again if the merge fails
    try:
        writers = []
        for spec, partial in zip(specs, partials, strict=True):
            partial.mkdir(parents=True, exist_ok=True)
            plan = [_out_tensor(n, _out_dtype(spec, infos[n][0]), infos[n][0]) for n in names]
            metadata = {
                "format": "pt",
                "frontier_lab_merge": json.dumps({"spec": spec.to_dict(), "input_hashes": hashes}),
            }
            writers.append(ShardWriter(partial, plan_shards(plan, shard_bytes), metadata))
        nonfinite = _stream(specs, ckpts, names, infos, writers, device, chunk_elems, progress)
        results = []
        for k, (spec, partial, out) in enumerate(zip(specs, partials, outs, strict=True)):
            writers[k].close()
            first_float = next((infos[n][0] for n in names if infos[n][0].is_float), None)
            copy_aux_files(ckpts[0].folder, partial, _out_dtype(spec, first_float) if first_float else None)
            record = {
                "spec": spec.to_dict(),
                "inputs": [
                    {"path": str(c.folder), "hash": h, "weight": w}
                    for c, h, w in zip(ckpts, hashes, spec.weights, strict=True)
                ],
                "nonfinite_tensors": nonfinite[k],
                "created_at": dt.datetime.now().isoformat(timespec="seconds"),
            }
            (partial / "merge.json").write_text(json.dumps(record, indent=2))
            if out.exists():
                shutil.rmtree(out)
            out.parent.mkdir(parents=True, exist_ok=True)
            partial.rename(out)
            results.append(MergeResult(out, spec, hashes, 0.0, nonfinite[k]))
    except BaseException as exc:
        for partial in partials:
            shutil.rmtree(partial, ignore_errors=True)
        _remove_empty(created)
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise UserError(
                f"no space left under {outs[0].parent} while writing the merge; nothing was kept: free space and rerun"
            ) from exc
        raise
    finally:
        for c in ckpts:
            c.close()
    elapsed = time.perf_counter() - start
    for r in results:
        r.seconds = elapsed
    return results


def _missing_folders(folders: list[Path]) -> list[Path]:
    """Each folder that does not exist yet, with its missing ancestors, deepest first."""
    missing = set()
    for folder in folders:
        here = folder.absolute()
        while not here.exists():
            missing.add(here)
            here = here.parent
    return sorted(missing, key=lambda p: len(p.parts), reverse=True)


def _remove_empty(folders: list[Path]) -> None:
    """The folders a failed merge made (deepest first), each only if nothing else was put there."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            continue


def _out_tensor(name: str, dtype: str, info: TensorInfo) -> OutTensor:
    item = torch.empty((), dtype=ST_DTYPES[dtype]).element_size()
    return OutTensor(name, dtype, info.shape, info.numel * item)


class _Buffers:
    """Flat buffers reused by role (input slot, float32 copy, accumulator, output slot): after the
    first chunks no chunk touches fresh memory, whose page faults cost more than the arithmetic."""

    def __init__(self, pin: bool = False):
        self._bufs: dict[tuple, torch.Tensor] = {}
        self.pin = pin  # host buffers in page-locked memory, for asynchronous copies to and from a GPU

    def get(self, key: tuple, numel: int, dtype: torch.dtype, device: str = "cpu") -> torch.Tensor:
        buf = self._bufs.get(key)
        if buf is None or buf.numel() < numel:
            pinned = self.pin and device == "cpu"
            buf = self._bufs[key] = torch.empty(numel, dtype=dtype, device=device, pin_memory=pinned)
        return buf[:numel]


def _stream(specs, ckpts, names, infos, writers, device, chunk_elems, show) -> list[list[str]]:
    """Read chunk i+1 (reader thread) while computing chunk i and writing chunk i−1 (writer
    thread). Two slots of each buffer alternate by chunk parity, so no thread overwrites data
    another still uses: a slot is refilled only after the read or write that used it returned."""
    work = [
        (n, lo, min(lo + chunk_elems, infos[n][0].numel))
        for n in names
        for lo in range(0, infos[n][0].numel, chunk_elems)
    ]
    total = sum(infos[n][0].numel for n in names)
    nonfinite: list[list[str]] = [[] for _ in specs]
    bufs = _Buffers(pin=device.startswith("cuda"))

    def load(i):
        name, lo, hi = work[i]
        slots = [
            bufs.get(("in", i % 2, j, info.dtype), hi - lo, ST_DTYPES[info.dtype]) for j, info in enumerate(infos[name])
        ]
        return [c.read_chunk(info, lo, hi, out=slot) for c, info, slot in zip(ckpts, infos[name], slots, strict=True)]

    def write(name, outputs):
        for writer, chunk in zip(writers, outputs, strict=True):
            writer.write(name, chunk)

    bar = tqdm(total=total, unit="param", unit_scale=True, desc=f"merge x{len(specs)}", disable=not show)
    with ThreadPoolExecutor(1) as reader, ThreadPoolExecutor(1) as writer_pool:
        pending_read = reader.submit(load, 0) if work else None
        pending_write = None
        for i, (name, lo, hi) in enumerate(work):
            chunks = pending_read.result()
            pending_read = reader.submit(load, i + 1) if i + 1 < len(work) else None
            outputs = _combine_all(specs, name, infos[name], chunks, device, nonfinite, bufs, i % 2)
            if pending_write:
                pending_write.result()
            pending_write = writer_pool.submit(write, name, outputs)
            bar.update(hi - lo)
        if pending_write:
            pending_write.result()
    bar.close()
    return nonfinite


def _combine_all(specs, name, infos, chunks, device, nonfinite, bufs, parity) -> list[torch.Tensor]:
    if not infos[0].is_float:
        for info, chunk in zip(infos[1:], chunks[1:], strict=True):
            if not torch.equal(chunk, chunks[0]):
                raise UserError(
                    f"non-float tensor {name} differs between inputs ({info.file.parent}); integers cannot be averaged"
                )
        return [chunks[0].clone()] * len(specs)
    n = chunks[0].numel()
    gpu = device.startswith("cuda")
    if gpu:  # each chunk crosses in its own dtype (pinned, asynchronous); it is converted on the device
        chunks = [
            bufs.get(("dev", j, c.dtype), n, c.dtype, device).copy_(c, non_blocking=True) for j, c in enumerate(chunks)
        ]
    as_f32 = [bufs.get(("f32", j), n, torch.float32, device).copy_(c) for j, c in enumerate(chunks)]
    acc = bufs.get(("acc",), n, torch.float32, device)
    tmp = bufs.get(("tmp",), n, torch.float32, device)
    outputs = []
    for k, spec in enumerate(specs):
        dtype = ST_DTYPES[_out_dtype(spec, infos[0])]
        methods.combine_into(spec.method, acc, as_f32, spec.weights, tmp)
        cast = bufs.get(("out", parity, k, dtype), n, dtype, device).copy_(acc)
        if gpu:  # back through pinned memory; the writer thread gets it after the sync below
            host = bufs.get(("host", parity, k, dtype), n, dtype)
            checked, cast = cast, host.copy_(cast, non_blocking=True)
        else:
            checked = cast
        if not all_finite(acc, checked):
            if not spec.allow_nonfinite:
                raise UserError(
                    f"merge with weights {spec.weights} makes tensor {name} non-finite (inf/NaN in {dtype}); "
                    "use a smaller |α| or pass --allow-nonfinite to keep it"
                )
            if name not in nonfinite[k]:
                nonfinite[k].append(name)
        outputs.append(cast)
    if gpu:
        torch.cuda.current_stream().synchronize()  # outputs are complete in host memory
    return outputs


def all_finite(acc: torch.Tensor, cast: torch.Tensor) -> bool:
    """One min/max pass over the float32 sum (NaN propagates through it); the exact but slow
    isfinite on the cast tensor runs only when a value is near the output dtype's limit."""
    if acc.numel() == 0:
        return True
    lo, hi = torch.aminmax(acc)
    lo, hi = float(lo), float(hi)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return False
    if max(-lo, hi) < torch.finfo(cast.dtype).max / 2:
        return True
    return bool(torch.isfinite(cast).all())
