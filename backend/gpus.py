"""GPU leases for local jobs: concurrent jobs on one node get disjoint GPUs.

A job's process takes its GPUs before anything initialises CUDA and exports them as
`CUDA_VISIBLE_DEVICES`, so torch, transformers and TRL see only those (TRL refuses a process that
sees several: `Trainer` would wrap the model in `nn.DataParallel`). A lease is a file per GPU beside
the jobs' logs, locked with flock(2) for as long as the job's process lives: the kernel drops the
lock when the process ends, however it ends (kill -9 included), so no lease outlives its job. The
file also names the holder's pid, for the refusal line.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from backend.errors import UserError

VISIBLE = "CUDA_VISIBLE_DEVICES"
ALL_FREE = -1  # a count: every GPU of the node that no local job holds (at least one)


def node_gpus() -> list[str]:
    """The GPUs this node offers its jobs, as CUDA names them: CUDA_VISIBLE_DEVICES when it is set
    (a user's restriction, Ray's assignment), else every device. torch counts devices with NVML
    first, which does not initialise CUDA, so the job can still choose what CUDA will see."""
    listed = os.environ.get(VISIBLE)
    if listed is not None:
        return [d.strip() for d in listed.split(",") if d.strip()]
    import torch

    return [str(i) for i in range(torch.cuda.device_count())]


@dataclass
class Lease:
    """GPUs held by this process until release() (or its end); release restores CUDA_VISIBLE_DEVICES."""

    gpus: list[str]
    previous: str | None = None
    files: list = field(default_factory=list)

    def release(self) -> None:
        for f in self.files:
            f.close()  # closing the only descriptor drops the flock
        self.files = []
        if self.previous is None:
            os.environ.pop(VISIBLE, None)
        else:
            os.environ[VISIBLE] = self.previous


def lease_gpus(
    folder: Path, count: int, wait: bool, label: str = "", pool: list[str] | None = None, poll_s: float = 2.0
) -> Lease:
    """Take `count` free GPUs of the node's pool (ALL_FREE: every free one) and export them as
    CUDA_VISIBLE_DEVICES; a pool with too few free waits (wait) or is refused in one line naming
    the holders."""
    pool = node_gpus() if pool is None else pool
    want = len(pool) if count == ALL_FREE else count
    if want > len(pool):
        raise UserError(
            f"the job asks for {count} GPU(s) and this node offers {len(pool)} ({','.join(pool) or 'none'})"
        )
    folder.mkdir(parents=True, exist_ok=True)
    previous = os.environ.get(VISIBLE)
    while True:
        held = _try(folder, pool, want)
        if held and (len(held) == want or count == ALL_FREE):
            for _, f in held:
                f.seek(0)
                f.truncate()
                f.write(json.dumps({"pid": os.getpid(), "job": label}))
                f.flush()
            names = [name for name, _ in held]
            os.environ[VISIBLE] = ",".join(names)
            return Lease(names, previous, [f for _, f in held])
        for _, f in held:
            f.close()
        if not wait:
            raise UserError(
                f"the job needs {count if count != ALL_FREE else 'at least 1'} GPU(s) and only {len(held)} "
                f"of this node's "
                f"{len(pool)} are free "
                f"({holders(folder, pool)}); start it with --gpu-busy wait, or when one ends"
            )
        time.sleep(poll_s)


def _try(folder: Path, pool: list[str], count: int) -> list[tuple[str, object]]:
    held = []
    for name in pool:
        f = open(_file(folder, name), "a+")  # noqa: SIM115 (held open: the lock lives with the descriptor)
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.close()
            continue
        held.append((name, f))
        if len(held) == count:
            break
    return held


def holders(folder: Path, pool: list[str]) -> str:
    """'GPU 0: pid 123 (job-x), ...' for the pool's leased GPUs, as their lease files say."""
    said = []
    for name in pool:
        try:
            entry = json.loads(_file(folder, name).read_text() or "{}")
        except (OSError, ValueError):
            continue
        if entry and _locked(_file(folder, name)):
            said.append(f"GPU {name}: pid {entry['pid']}" + (f" ({entry['job']})" if entry.get("job") else ""))
    return ", ".join(said) or "none recorded"


def _locked(path: Path) -> bool:
    with open(path, "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        return False


def _file(folder: Path, name: str) -> Path:
    return folder / f"gpu-{name.replace('/', '_')}.lease"


def gpus_wanted(spec) -> int:
    """GPUs a job leases on this node: an RL job's `gpus` (a fraction is one GPU), a sweep's or
    eval's one engine (tensor_parallel_size; engine openai: the server it starts, none for a running
    one); on a local Ray cluster, which this job starts on this
    node, its `gpus` or ALL_FREE (the pool takes every GPU no local job holds); 0 on a user's Ray
    cluster (Ray owns its GPUs) and on CPUs."""
    if getattr(spec, "executor", "local") != "local":
        from backend.sweep.ray_join import chosen_address

        if chosen_address(spec.ray_address)[0]:
            return 0
        if spec.kind == "rl":
            return 0 if spec.gpus == 0 else max(1, int(spec.gpus))
        return spec.gpus or ALL_FREE
    if spec.kind == "rl":
        return 0 if spec.gpus == 0 else max(1, int(spec.gpus))
    if getattr(spec, "engine", None) == "openai" and not spec.serve:
        return 0  # a server the user runs holds its own GPUs
    return spec.tensor_parallel_size
