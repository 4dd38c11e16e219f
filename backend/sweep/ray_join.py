"""Joining a running Ray cluster under Ray 2.60's rules, or failing in one line within seconds.

Which cluster, as Ray's own tools decide (ray/_private/worker.py:1686-1694): `--ray-address`
(the spec's `ray_address`) when given, else `RAY_ADDRESS` when exported (every KubeRay pod and
shell after `ray start --head` has it); neither starts a local cluster of the project's own. An
address is `auto`, HOST:PORT (the head's GCS) or `ray://HOST:PORT` (Ray Client). When joining,
nothing asks for resources the cluster owns: ray.init refuses num_cpus/num_gpus then
(worker.py:1935-1939). Three more rules bite a driver that joins:

- Ray rewrites a loopback address (127.0.0.1, localhost, ::1) to this machine's network interface
  unless its multi-node mode is off (ray/_private/services.py resolve_ip_for_localhost and
  get_node_ip_address; RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER, ray_constants.py:657-661). A cluster
  started on 127.0.0.1 listens there only, so the rewritten address is never answered and ray.init
  retries for many minutes: a loopback address is joined with that mode off.
- `ray start --head` turns token authentication on when this machine holds a token (RAY_AUTH_TOKEN,
  RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token; scripts.py:1069), and every cluster that ray.init()
  starts writes one. A driver sends the token only if RAY_AUTH_MODE=token, which ray.init sets
  for `auto` but never for an explicit address (worker.py:1971-1977), so an explicit address fails
  with an invalid-token error: a join here applies the `auto` rule to both. Whether the cluster
  agrees (it wants no token, or another one) is asked first, and a mismatch is one line (ray_auth.py).
- ray.init waits long for a GCS that is not there; the address's port is tried first (CONNECT_S).

The cluster's workers start in Ray's own directories, on nodes that need not hold this repository:
the project's code travels with the job (`runtime_env` working_dir: the repository without .venv,
db/, artifacts/ and runs/), and the folders a job reads are checked on every node before
any work is placed (backend/sweep/shared_paths.py).
"""

from __future__ import annotations

import ipaddress
import os
import socket
from pathlib import Path

from backend.errors import UserError
from backend.sweep.cluster_env import shipped_env
from backend.sweep.ray_auth import check_token

CONNECT_S = 5.0
ROOT = Path(__file__).resolve().parents[2]


CLIENT = "ray://"
# what stays home (gitignore patterns, `/` = the repository root): the venvs (each node has its own),
# the database, artifacts and runs (data, not code), git's files and bytecode
SHIPPED_EXCLUDES = [
    "/.venv",
    "/.venv-gpu",
    "/db/",
    "/artifacts/",
    "/runs/",
    "/build/",
    "/.git",
    "__pycache__/",
    "*.pyc",
    ".pytest_cache/",
    ".ruff_cache/",
]


def chosen_address(address: str | None) -> tuple[str | None, str]:
    """(the address to join or None for a local cluster, where it came from), as ray.init reads it:
    the argument first, then RAY_ADDRESS when it is set and not empty."""
    if address:
        return address, "--ray-address"
    return os.environ.get("RAY_ADDRESS") or None, "RAY_ADDRESS"


def split_address(address: str, source: str = "--ray-address") -> tuple[str, int]:
    bare = address.strip().removeprefix(CLIENT)
    host, _, port = bare.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit():
        raise UserError(f"{source} {address!r} is not HOST:PORT, ray://HOST:PORT or auto")
    return host, int(port)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def find_address(address: str, source: str = "--ray-address") -> str:
    """The cluster to join: `auto` as Ray resolves it (RAY_ADDRESS, then the address the last
    `ray start` of this machine recorded in its temp dir, then a running GCS process)."""
    if address != "auto":
        return address
    from ray._private import services

    try:
        return services.get_ray_address_from_environment("auto", None)
    except ConnectionError as exc:
        raise UserError(f"{source} auto found no running Ray cluster on this machine ({exc})") from None


def reachable(host: str, port: int, source: str = "--ray-address") -> None:
    try:
        with socket.create_connection((host, port), timeout=CONNECT_S):
            return
    except OSError as exc:
        raise UserError(
            f"no Ray cluster answers at {host}:{port} (from {source}: {exc.strerror or type(exc).__name__}); "
            "start one with `ray start --head` or set the address its head printed (--ray-address or RAY_ADDRESS)"
        ) from None


def shipped_code(runtime_env: dict | None) -> dict:
    """The job's runtime_env with this repository in it as Ray's working_dir: Ray uploads it once
    (by content hash, without SHIPPED_EXCLUDES) and every worker, on any node, runs in its own
    unpacked copy and imports `backend` from there. The whole repository, not the package alone:
    the code reads files beside it (scripts/build_sandbox_image.sh names the sandbox image). The
    variables the project reads go with it (cluster_env.py): the cluster's processes started in an
    environment of their own."""
    env = dict(runtime_env or {})
    env["working_dir"] = str(ROOT)
    env["excludes"] = [*SHIPPED_EXCLUDES, *(env.get("excludes") or [])]
    env["env_vars"] = {**shipped_env(), **(env.get("env_vars") or {})}
    return env


def join(ray, address: str, source: str = "--ray-address", **init_kw):
    """ray.init into the running cluster at `address` (auto | HOST:PORT | ray://HOST:PORT)."""
    from ray._private import ray_constants
    from ray._private.authentication.authentication_token_setup import maybe_enable_token_auth_if_token_available

    target = find_address(address, source)
    host, port = split_address(target, source)
    if is_loopback(host):  # keep 127.0.0.1 as it is, here and in the processes Ray starts
        os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
        ray_constants.ENABLE_RAY_CLUSTER = False  # read at import, which may have happened
    reachable(host, port, source)
    if not target.startswith(CLIENT):  # a Ray Client server authenticates on its own
        check_token(f"{host}:{port}", source)
    maybe_enable_token_auth_if_token_available(warn_if_disabled=False)  # what `auto` does, for every address
    runtime_env = shipped_code(init_kw.pop("runtime_env", None))
    try:  # the tasks' and actors' output reaches the job's log: an engine's root cause is printed there
        ray.init(address=target, log_to_driver=True, runtime_env=runtime_env, **init_kw)
    except Exception as exc:  # Ray's own refusal (a token, a version): its first line
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise UserError(f"could not join the Ray cluster at {target} (from {source}): {first}") from None
    return ray
