"""Joining a running Ray cluster (`--ray-address HOST:PORT` or `auto`) under Ray 2.60's rules, or
failing in one line within seconds. Three of Ray's rules bite a driver that joins:

- Ray rewrites a loopback address (127.0.0.1, localhost, ::1) to this machine's network interface
  unless its multi-node mode is off (ray/_private/services.py resolve_ip_for_localhost and
  get_node_ip_address; RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER, ray_constants.py:657-661). A cluster
  started on 127.0.0.1 listens there only, so the rewritten address is never answered and ray.init
  retries for many minutes: a loopback address is joined with that mode off.
- `ray start --head` turns token authentication on when this machine holds a token (RAY_AUTH_TOKEN,
  RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token; scripts.py:1069), and every cluster that ray.init()
  starts writes one. A driver sends the token only if RAY_AUTH_MODE=token, which ray.init sets
  for `auto` but never for an explicit address (worker.py:1971-1977), so an explicit address fails
  with an invalid-token error: a join here applies the `auto` rule to both.
- ray.init waits long for a GCS that is not there; the GCS port is tried first (CONNECT_S).

The cluster's worker processes start in Ray's own directories with the environment of whoever ran
`ray start`, so they are told where this project is: PYTHONPATH, through the job's runtime_env, is
the driver's repository, which every node holds at the same path (docs/scaling.md).
"""

from __future__ import annotations

import ipaddress
import os
import socket
from pathlib import Path

from backend.errors import UserError

CONNECT_S = 5.0
ROOT = Path(__file__).resolve().parents[2]


def split_address(address: str) -> tuple[str, int]:
    host, _, port = address.strip().rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit():
        raise UserError(f"--ray-address {address!r} is not HOST:PORT or auto")
    return host, int(port)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def find_address(address: str) -> str:
    """HOST:PORT of the cluster to join: `auto` as Ray resolves it (RAY_ADDRESS, then the address
    the last `ray start` of this machine recorded in its temp dir, then a running GCS process)."""
    if address != "auto":
        return address
    from ray._private import services

    try:
        return services.get_ray_address_from_environment("auto", None)
    except ConnectionError as exc:
        raise UserError(f"--ray-address auto found no running Ray cluster on this machine ({exc})") from None


def reachable(host: str, port: int) -> None:
    try:
        with socket.create_connection((host, port), timeout=CONNECT_S):
            return
    except OSError as exc:
        raise UserError(
            f"no Ray cluster answers at {host}:{port} ({exc.strerror or type(exc).__name__}); start one with "
            "`ray start --head` or pass the address its head printed as --ray-address HOST:PORT"
        ) from None


def join(ray, address: str, **init_kw):
    """ray.init into the running cluster at `address` (auto | HOST:PORT)."""
    from ray._private import ray_constants
    from ray._private.authentication.authentication_token_setup import maybe_enable_token_auth_if_token_available

    target = find_address(address)
    host, port = split_address(target)
    if is_loopback(host):  # keep 127.0.0.1 as it is, here and in the processes Ray starts
        os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
        ray_constants.ENABLE_RAY_CLUSTER = False  # read at import, which may have happened
    reachable(host, port)
    maybe_enable_token_auth_if_token_available(warn_if_disabled=False)  # what `auto` does, for every address
    runtime_env = dict(init_kw.pop("runtime_env", None) or {})
    runtime_env["env_vars"] = {"PYTHONPATH": str(ROOT)} | (runtime_env.get("env_vars") or {})
    try:
        ray.init(address=target, log_to_driver=False, runtime_env=runtime_env, **init_kw)
    except Exception as exc:  # Ray's own refusal (a token, a version): its first line
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise UserError(f"could not join the Ray cluster at {target}: {first}") from None
    return ray
