"""Before a job places work on a user's Ray cluster: one task pinned to each alive node says what
that node can do, the job's log gets it as one table, and a node that cannot serve stops the job in
one line naming it.

Each node reports its Python packages (torch; vLLM where it has GPUs), the sandbox (bubblewrap and
the sandbox's Python for the bwrap backend), g++ (C++ programs and testlib checkers), the merge
cache as the job's variables make it there (cluster_env.py: its folder, its budget, the free disk
under it) and what it sees at every folder the job reads (shared_paths.py). The job's variables
reach the probe as they reach every task, so its row is what the job's tasks will see.
"""

from __future__ import annotations

import importlib
import os
import shutil
import socket

from backend.errors import UserError
from backend.merge.space import gb
from backend.sweep.cluster_env import files_read
from backend.sweep.shared_paths import mismatch, seen_here, tokens_in

INSTALL = "install requirements.txt (and requirements-gpu.txt on a GPU node) into the venv its `ray start` used"


def probe(paths: list[str], packages: tuple[str, ...]) -> dict:
    """One node's row (runs there; imports nothing it reports on before reporting it)."""
    from backend.merge.space import budget_bytes, default_root, free_bytes
    from backend.sandbox.boot import SANDBOX_PYTHON

    cache = default_root()
    row = {
        "host": socket.gethostname(),
        "bwrap": shutil.which("bwrap"),
        "sandbox_python": os.path.exists(SANDBOX_PYTHON),
        "g++": shutil.which("g++"),
        "cache": str(cache),
        "budget_gb": budget_bytes() / (1 << 30),
        "free": free_bytes(cache),
        "seen": seen_here(paths),
        "packages": {},
        "missing": {},
    }
    for name in packages:
        try:
            row["packages"][name] = getattr(importlib.import_module(name), "__version__", "?")
        except Exception as exc:  # the import's own reason, shown in the table and the refusal
            row["missing"][name] = f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"
    return row


def preflight(ray, folders: list[str], writable: list[str], backend: str | None, engine: str | None,
              packages: tuple[str, ...] = ("torch",)) -> list[dict]:  # fmt: skip
    """Ask every alive node, print the table, refuse the first node that cannot serve the job.
    `folders` are read by the job (checkpoints), `writable` written by every node (the merge cache,
    an RL run's output); `backend` is the sandbox the judge uses (None: the job judges nothing),
    `engine` the sweep's engine (vllm is required on GPU nodes only when asked for by name)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    gpu_packages = ("vllm",) if engine in ("vllm", "auto") else ()  # vLLM runs on GPU nodes only
    with tokens_in(writable) as tokens:
        paths = [p for p in [*folders, *files_read()] if os.path.exists(p)] + list(tokens)
        expected = seen_here(paths)
        nodes = [n for n in ray.nodes() if n["Alive"]]
        task = ray.remote(num_cpus=0)(probe)
        refs = [
            task.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)).remote(
                paths, (*packages, *(gpu_packages if n["Resources"].get("GPU") else ()))
            )
            for n in nodes
        ]
        rows = [{**ray.get(ref), "node": n} for ref, n in zip(refs, nodes, strict=True)]
    print(table(rows, paths, expected), flush=True)
    for row in rows:
        refuse(row, paths, expected, tokens, backend, engine)
    return rows


def where(node: dict) -> str:
    return f"Ray node {node['NodeManagerAddress']} ({node['NodeID'][:8]})"


def refuse(row: dict, paths: list[str], expected: dict, tokens: dict, backend: str | None, engine: str | None):
    """One line for the first reason this node cannot serve the job, if any."""
    node = where(row["node"])
    for name, why in row["missing"].items():
        if name != "vllm" or engine == "vllm":  # engine auto falls back to transformers without vLLM
            raise UserError(f"{node} cannot import {name} ({why}); {INSTALL} (docs/scaling.md)")
    if backend == "bwrap" and not row["bwrap"]:
        raise UserError(f"{node} has no bubblewrap for the sandbox: `apt-get install bubblewrap` there")
    if backend in ("bwrap", "none") and not row["sandbox_python"]:
        raise UserError(f"{node} has no /usr/bin/python3 for the sandbox: install Debian's python3-minimal there")
    if (bad := mismatch(row["seen"], paths, expected)) is not None:
        raise UserError(
            f"{tokens.get(bad, bad)} is not the same folder on {node} as on this machine; put it on a filesystem "
            "every node mounts at the same path (for a hub checkpoint: the hub cache, HF_HOME)"
        )


def table(rows: list[dict], paths: list[str], expected: dict) -> str:
    """The job log's table: a line per node."""
    head = ["node", "host", "CPUs", "GPUs", "packages", "bwrap", "g++", "merge cache", "budget", "free", "shared paths"]
    lines = [head]
    for row in rows:
        node = row["node"]
        same = sum(row["seen"][p] == expected[p] for p in paths)
        lines.append([
            f"{node['NodeManagerAddress']} ({node['NodeID'][:8]})",
            row["host"],
            f"{node['Resources'].get('CPU', 0):g}",
            f"{node['Resources'].get('GPU', 0):g}",
            " ".join([*(f"{k} {v}" for k, v in row["packages"].items()), *(f"{k} missing" for k in row["missing"])]),
            "yes" if row["bwrap"] else "no",
            "yes" if row["g++"] else "no",
            row["cache"],
            f"{row['budget_gb']:g} GB",
            gb(row["free"]),
            f"{same} of {len(paths)} the same",
        ])  # fmt: skip
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(head))]
    text = ["  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines]
    return f"Ray preflight, {len(rows)} node(s):\n" + "\n".join(text)
