"""The environment variables the project reads, declared once: what a job's Ray tasks and actors
get from the driver's environment (runtime_env["env_vars"]).

A cluster that the job joins started its processes in its own environment (another HOME, no
FLAB_*): without this a task merges under a budget the user never set, judges under another
sandbox and loads vLLM with other settings. Variables of these families go with the job when the
driver has them set; those named in STAY_HERE never do.
"""

from __future__ import annotations

import os

# FLAB_*: the project's own (merge cache, sandbox, checkers); HF_*: the hub cache and offline mode
# (HF_HOME, HF_HUB_OFFLINE, …); VLLM_*: vLLM's; CUDA_*: the CUDA runtime's (CUDA_LAUNCH_BLOCKING, …)
SHIPPED_PREFIXES = ("FLAB_", "HF_", "VLLM_", "CUDA_")

STAY_HERE = {
    "CUDA_VISIBLE_DEVICES": "Ray gives each task and actor its own GPUs",
    "FLAB_CGROUP_PARENT": "a cgroup of this node (the sandbox finds each node's own)",
    "FLAB_ADMISSION_LEDGER": "this node's memory ledger for the sandbox",
    "FLAB_DB": "the database is the driver's alone; tasks never open it",
    "FLAB_TOKEN": "the dashboard's secret: a runtime_env is shown on the cluster's dashboard",
    "HF_TOKEN": "a secret: hub checkpoints are downloaded on the driver, never on a node",
}

# read by the project under another name (each says why it is not shipped)
OTHERS = {
    "RAY_ADDRESS": "Ray's own: which cluster the driver joins",
    "RAY_OVERRIDE_RESOURCES": "Ray's own: resources a local cluster declares",
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "Ray's own: set for the driver's join, and by the nodes' `ray start`",
    "RAY_AUTH_MODE": "Ray's own: whether this driver authenticates (ray_auth.py)",
    "RAY_AUTH_TOKEN": "Ray's own: this machine's token; the cluster's nodes hold theirs",
    "RAY_AUTH_TOKEN_PATH": "Ray's own: where this machine's token is",
    "XDG_CACHE_HOME": "each node's own cache (compiled checkers): a node's HOME, not the driver's",
    "LOCAL_WORLD_SIZE": "accelerate's and torchrun's: an RL rank's share of its node's cores for judging",
}


def shipped(name: str) -> bool:
    return name.startswith(SHIPPED_PREFIXES) and name not in STAY_HERE


def shipped_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The driver's variables that a job's tasks and actors get, wherever they run."""
    environ = os.environ if environ is None else environ
    return {name: value for name, value in sorted(environ.items()) if shipped(name)}


FILES = ("FLAB_TESTLIB",)  # shipped variables naming a file the judge reads on any node: it must be there too


def files_read(environ: dict[str, str] | None = None) -> list[str]:
    """The files the job's variables name, which every node must see as the driver does."""
    environ = os.environ if environ is None else environ
    return [environ[name] for name in FILES if environ.get(name)]
