"""Ray's reason for a failed task or a dead actor, in one line for the job's error; the whole text
(the remote traceback) stays in the job's log, where the tasks' and actors' own output also
arrives (log_to_driver): vLLM prints its engine's root cause there before it raises "Engine core
initialization failed. See root cause above"."""

from __future__ import annotations

import re

# the identifying fields of ActorDiedError's text (ray/exceptions.py): not the cause
_FIELDS = re.compile(r"^(class_name|actor_id|pid|name|namespace|ip): ")


def cause(exc: BaseException) -> str:
    """One line: what failed and why, as Ray says it."""
    from ray.exceptions import ActorDiedError, RayActorError, RayTaskError

    if isinstance(exc, RayTaskError):  # the exception the remote code raised, by its type and message
        inner = exc.cause if isinstance(exc.cause, BaseException) else None
        if inner is not None and not isinstance(inner, RayTaskError):
            return f"{exc.function_name} raised {type(inner).__name__}: {_first(str(inner))}"
        return f"{exc.function_name} raised {_last(str(exc))}"
    if isinstance(exc, RayActorError):
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        if exc.actor_init_failed:  # its __init__ raised: the traceback's last line is the exception
            return f"the actor's __init__ raised {_last(str(exc))}"
        fields = dict(line.split(": ", 1) for line in lines if _FIELDS.match(line))
        why = [line for line in lines[1:] if not _FIELDS.match(line)] if isinstance(exc, ActorDiedError) else lines
        where = f" (pid {fields['pid']} on {fields['ip']})" if "pid" in fields and "ip" in fields else ""
        said = (" ".join(why) or lines[0]) if lines else type(exc).__name__
        return said + where
    return _first(str(exc)) or type(exc).__name__


def _first(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _last(text: str) -> str:
    return next((line.strip() for line in reversed(text.splitlines()) if line.strip()), "")
