"""Folders a job reads on a Ray cluster must be the same folder on every node, or the job stops
in one line before any work is placed there.

A checkpoint or the merge cache named by a path is read (and the cache written) wherever Ray
places a task; a path that only the driver's machine holds fails deep inside a task
(`FileNotFoundError` in a RayTaskError) or, worse, finds another folder at the same path. So every
alive node is asked, with a task pinned to it, what it sees at each path: a checkpoint's file
names and sizes, and for the writable cache a token the driver has just written. A hub
checkpoint (org/name) reaches here as the driver's snapshot folder (hub.resolve_checkpoint runs on
the driver), so the hub cache must be shared as well.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from backend.errors import UserError

TOKEN_PREFIX = ".flab-shared-"


def fingerprint(path: str) -> list | str | None:
    """What a node sees at `path`: a folder's top-level file names and sizes, a token file's
    content; None where nothing is."""
    found = Path(path)
    if found.is_file():
        return found.read_text()
    if not found.is_dir():
        return None
    return sorted((p.name, p.stat().st_size if p.is_file() else -1) for p in found.iterdir())


def seen_here(paths: list[str]) -> dict[str, list | None]:
    return {p: fingerprint(p) for p in paths}


def require_shared(ray, checkpoints: list[str], writable: list[str]) -> None:
    """Refuse, in one line, a job whose folders some alive node does not see as the driver does.
    `checkpoints`: folders read (a name that is no folder here is skipped); `writable`: folders
    every node writes."""
    paths, tokens = [p for p in checkpoints if os.path.isdir(p)], {}
    for folder in writable:  # the cache's own files come and go while jobs run: a token of this job's
        token = Path(folder) / f"{TOKEN_PREFIX}{secrets.token_hex(8)}"
        token.parent.mkdir(parents=True, exist_ok=True)
        token.write_text(secrets.token_hex(16))  # only a folder this machine shares shows it elsewhere
        tokens[str(token)] = folder
    paths += list(tokens)
    if not paths:
        return
    try:
        _compare(ray, paths, tokens)
    finally:
        for token in tokens:
            Path(token).unlink(missing_ok=True)


def _compare(ray, paths: list[str], tokens: dict[str, str]) -> None:
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    expected = seen_here(paths)
    nodes = [n for n in ray.nodes() if n["Alive"]]
    probe = ray.remote(num_cpus=0)(seen_here)
    refs = {
        probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)).remote(paths): n
        for n in nodes
    }
    for ref, node in refs.items():
        seen = ray.get(ref)
        for path in paths:
            if seen[path] != expected[path]:
                raise UserError(
                    f"{tokens.get(path, path)} is not the same folder on Ray node {node['NodeManagerAddress']} "
                    f"({node['NodeID'][:8]}) as on this machine; put it on a filesystem every node mounts "
                    "at the same path (for a hub checkpoint: the hub cache, HF_HOME)"
                )
