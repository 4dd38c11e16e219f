"""Folders a job reads on a Ray cluster must be the same folder on every node, or the job stops
in one line before any work is placed there (asked by the preflight, backend/sweep/preflight.py).

A checkpoint or the merge cache named by a path is read (and the cache written) wherever Ray
places a task; a path that only the driver's machine holds fails deep inside a task
(`FileNotFoundError` in a RayTaskError) or, worse, finds another folder at the same path. So every
alive node is asked, with a task pinned to it, what it sees at each path: a checkpoint's file
names and sizes, and for the writable cache a token the driver has just written. A hub
checkpoint (org/name) reaches here as the driver's snapshot folder (hub.resolve_checkpoint runs on
the driver), so the hub cache must be shared as well.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator
from pathlib import Path

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


@contextlib.contextmanager
def tokens_in(writable: list[str]) -> Iterator[dict[str, str]]:
    """A token file of this job's in each folder every node writes ({token path: folder}), removed
    after: the folder's own files come and go while jobs run, and only a folder this machine shares
    shows another node the token it has just written."""
    tokens = {}
    try:
        for folder in writable:
            token = Path(folder) / f"{TOKEN_PREFIX}{secrets.token_hex(8)}"
            token.parent.mkdir(parents=True, exist_ok=True)
            token.write_text(secrets.token_hex(16))
            tokens[str(token)] = folder
        yield tokens
    finally:
        for token in tokens:
            Path(token).unlink(missing_ok=True)


def mismatch(seen: dict, paths: list[str], expected: dict) -> str | None:
    """The first path a node sees otherwise than this machine, or None."""
    return next((p for p in paths if seen[p] != expected[p]), None)
