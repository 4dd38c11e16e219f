"""What the `openai` engine takes from a job's spec, and the check of its extra request fields: light
(no engine, no client), so the specs can check them where they are built."""

from __future__ import annotations

import json
from dataclasses import dataclass

from backend.errors import UserError

OURS = {"model", "messages", "prompt", "temperature", "top_p", "max_tokens", "max_completion_tokens", "seed",
        "stop", "n", "stream"}  # fmt: skip


@dataclass(frozen=True)
class ServerOptions:
    """What the `openai` engine takes from a job's spec (its fields of the same names)."""

    server_url: str | None = None
    serve: str | None = None
    api_key_env: str | None = None
    concurrency: int = 8
    request_timeout_s: float = 600.0
    server_start_timeout_s: float = 900.0
    extra_body: str | None = None

    @classmethod
    def of(cls, spec) -> ServerOptions:
        return cls(**{f: getattr(spec, f) for f in cls.__dataclass_fields__})


def parse_extra_body(text: str | None) -> dict:
    """The user's extra request fields: a JSON object that sets none of the fields the engine sets."""
    if not text or not text.strip():
        return {}
    try:
        extra = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"extra_body is not JSON ({exc.msg} at character {exc.pos})") from None
    if not isinstance(extra, dict):
        raise UserError('extra_body must be a JSON object, e.g. {"top_k": 20}')
    clash = sorted(set(extra) & OURS)
    if clash:
        raise UserError(f"extra_body sets {clash[0]!r}, which the job sets itself; use its own option")
    return extra
