"""Token authentication between this driver and a running Ray cluster, said in words before joining.

Ray 2.60 (ray/_private/authentication/, the token loader in _raylet.so) reads one token from the
first of: RAY_AUTH_TOKEN, the file RAY_AUTH_TOKEN_PATH names, ~/.ray/auth_token (the first line,
trimmed). Every local `ray.init()` writes ~/.ray/auth_token when there is none, so a machine that
ever ran the project's own local cluster holds one. A driver sends its token when RAY_AUTH_MODE is
token (a join sets it, as Ray does for `auto`, when a token is found and the user left the mode
unset: ray_join.py) and then also *requires* it of every call made to it. Two mismatches follow:

- the cluster authenticates and this machine lacks its token: Ray's AuthenticationError, or a wait;
- the cluster does not authenticate and this machine holds a token: the join works, tasks run, but
  the cluster's processes call the driver without a token and are refused ("Missing authorization
  header"), so every actor is cancelled before it starts ("The actor died unexpectedly").

So the join first asks the cluster's GCS one harmless question (GetClusterId) without a token, and
if refused, with this machine's token, and stops in one line naming the token's sources and what to
do when the two sides do not agree.
"""

from __future__ import annotations

import os
from pathlib import Path

from backend.errors import UserError

SOURCES = "RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH, ~/.ray/auth_token"
ASK_S = 5.0


def local_token() -> tuple[str | None, str]:
    """(this machine's token or None, where it came from), in Ray's order of precedence."""
    if token := os.environ.get("RAY_AUTH_TOKEN", "").strip():
        return token, "RAY_AUTH_TOKEN"
    if path := os.environ.get("RAY_AUTH_TOKEN_PATH"):
        return _first_line(Path(path)), f"RAY_AUTH_TOKEN_PATH={path}"
    default = Path.home() / ".ray" / "auth_token"
    return _first_line(default), str(default)


def _first_line(path: Path) -> str | None:
    try:
        return (path.read_text().splitlines() or [""])[0].strip() or None
    except OSError:
        return None


def sends_token() -> bool:
    """Whether this process will authenticate (after the join's own rule: ray_join.join)."""
    mode = os.environ.get("RAY_AUTH_MODE")
    return mode.lower() == "token" if mode is not None else local_token()[0] is not None


def answers(address: str, token: str | None) -> bool | None:
    """True when the GCS at HOST:PORT answers a call carrying `token` (None: no token), False when
    it refuses it as unauthenticated, None when it gave no verdict (another error: left to ray.init)."""
    import grpc
    from ray.core.generated import gcs_service_pb2, gcs_service_pb2_grpc

    metadata = [("authorization", f"Bearer {token}")] if token else []
    with grpc.insecure_channel(address) as channel:
        stub = gcs_service_pb2_grpc.NodeInfoGcsServiceStub(channel)
        try:
            stub.GetClusterId(gcs_service_pb2.GetClusterIdRequest(), metadata=metadata, timeout=ASK_S)
            return True
        except grpc.RpcError as exc:
            return False if exc.code() == grpc.StatusCode.UNAUTHENTICATED else None


def check_token(address: str, source: str) -> None:
    """Refuse, in one line, a join whose token this cluster would not accept or would not send back."""
    open_cluster = answers(address, None)
    if open_cluster is None:
        return
    token, where = local_token()
    sending = sends_token()
    if open_cluster and sending:
        held = f"holds a Ray token ({where})" if token else "has RAY_AUTH_MODE=token"
        raise UserError(
            f"the Ray cluster at {address} (from {source}) does not use token authentication, but this machine "
            f"{held}, which Ray sends and then requires of the cluster's calls back, so every actor would die "
            f"unstarted; join with RAY_AUTH_MODE=disabled, or start the cluster with that token (token sources: "
            f"{SOURCES}; docs/scaling.md)"
        )
    if open_cluster:
        return
    if token is None:
        raise UserError(
            f"the Ray cluster at {address} (from {source}) requires its token and this machine has none (none in "
            f"{SOURCES.replace(', ~', ' or ~')}); copy the head's ~/.ray/auth_token (or `ray get-auth-token` there) "
            "to ~/.ray/auth_token here, or export RAY_AUTH_TOKEN or RAY_AUTH_TOKEN_PATH (docs/scaling.md)"
        )
    if not sending:
        raise UserError(
            f"the Ray cluster at {address} (from {source}) requires its token and RAY_AUTH_MODE is "
            f"{os.environ.get('RAY_AUTH_MODE')!r} here; unset RAY_AUTH_MODE (or set it to token) to send the token "
            f"in {where}"
        )
    if answers(address, token) is False:
        raise UserError(
            f"the Ray cluster at {address} (from {source}) refuses this machine's token ({where}; sources in order: "
            f"{SOURCES}); put the head's token (its ~/.ray/auth_token, or `ray get-auth-token` there) in the first "
            "of them that is set (docs/scaling.md)"
        )
