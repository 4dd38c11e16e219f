"""testlib-style checkers compiled once per (source, header) and cached on disk.

A CodeContests+ checker takes seconds to compile against testlib.h; compiling it again for every
judged program would cost more than judging. The compiler runs in the sandbox (the source comes
from a dataset); the binary comes back to the host, is stored under its key, and every later
special-judge session loads it into its own sandbox. Importers call `compile_checker` for every
checker, so one that does not compile is known at import, not at judge time.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from backend.errors import UserError
from backend.grading.limits import JudgeLimits
from backend.sandbox.backends import SandboxError, open_session

HEADER = Path(__file__).with_name("testlib.h")
COMPILE_LIMITS = JudgeLimits(compile_time_s=60.0).for_compile()  # checkers may pull in a large header


class CheckerCompileError(UserError):
    """The checker's source does not compile against the header."""


def testlib_header() -> str:
    """testlib.h for C++ special judges: the real one from FLAB_TESTLIB, else ours."""
    return Path(os.environ.get("FLAB_TESTLIB") or HEADER).read_text()


def cache_dir() -> Path:
    default = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "frontier-lab" / "checkers"
    return Path(os.environ.get("FLAB_CHECKER_CACHE") or default)


def checker_key(source: str, header: str) -> str:
    return hashlib.sha256(header.encode() + b"\0" + source.encode()).hexdigest()[:32]


def compile_checker(source: str, backend: str = "bwrap") -> bytes:
    """The checker's binary, from the cache or compiled now (in the sandbox) and cached."""
    header = testlib_header()
    path = cache_dir() / f"{checker_key(source, header)}.bin"
    if path.is_file():
        return path.read_bytes()
    session = open_session(backend, allow_none=backend == "none")
    try:
        loaded = session.load("cpp", source, COMPILE_LIMITS, {"testlib.h": header}, return_binary=True)
    except SandboxError as exc:
        raise CheckerCompileError(f"the checker could not be compiled: {exc}") from exc
    finally:
        session.close()
    if not loaded.ok:
        raise CheckerCompileError(f"the checker does not compile: {_first_error(loaded.error or '')}")
    binary = loaded.binary
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")  # whole or not at all
    with os.fdopen(fd, "wb") as f:
        f.write(binary)
    os.replace(tmp, path)
    return binary


def _first_error(text: str) -> str:
    lines = [line for line in text.splitlines() if "error" in line]
    return (lines[0] if lines else text.strip().splitlines()[-1] if text.strip() else "no output")[:300]
