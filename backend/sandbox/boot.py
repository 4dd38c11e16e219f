"""How a sandbox's interpreter gets its launcher (launcher.py).

Every test is a fork of the launcher, and each page the launcher holds is mapped into that fork
and unmapped at its exit. Started as `python3 -c SOURCE`, the interpreter keeps the syntax tree of
SOURCE for as long as SOURCE runs (CPython frees a `-c` string's tree only when its code returns,
and the launcher's never does), and the compiler's freed pages cannot be handed back around it.
So the interpreter starts from `BOOT`, a few lines whose tree is small, which read the sources
from the control pipe (the launcher's three helpers, each registered as a module, then the launcher),
compile each (its tree is freed at once) and run them: 3.8 MB of private memory after a test
against 5.2 MB (tests/sandbox/test_hot_path.py measures both).
"""

from __future__ import annotations

import functools
from pathlib import Path

HERE = Path(__file__).parent
# (module name, source): the launcher's helpers, each registered as a module, then the launcher
HELPERS = ("launcher_files", "launcher_limits", "launcher_python")
LAUNCHER_MODULES = tuple((name, (HERE / f"{name}.py").read_text()) for name in HELPERS)
LAUNCHER_SOURCE = (HERE / "launcher.py").read_text()
SANDBOX_PYTHON = "/usr/bin/python3"  # Debian's interpreter: readable by nobody, outside our venv
HEADER = 12  # the manifest's size in bytes, as decimal digits padded with spaces

BOOT = f"""import os, sys
def _take(n):
    data = b""
    while len(data) < n:
        chunk = os.read(0, n - len(data))
        if not chunk:
            raise SystemExit("the host sent no launcher")
        data += chunk
    return data
_manifest = _take(int(_take({HEADER}))).decode().split()
for _name, _size in zip(_manifest[::2], _manifest[1::2]):
    _code = compile(_take(int(_size)).decode(), _name + ".py", "exec")
    if _name == "launcher":
        exec(_code)
    _module = sys.modules[_name] = type(sys)(_name)
    exec(_code, _module.__dict__)
"""


def launcher_command(python: str, workdir: str, *args: str) -> list[str]:
    return [python, "-I", "-S", "-c", BOOT, workdir, *args]


@functools.cache
def launcher_image() -> bytes:
    """What BOOT reads first: a manifest (name and size of each source), then the sources, the
    launcher's last. Built once per host process: the sources do not change."""
    parts = [(name, text.encode()) for name, text in (*LAUNCHER_MODULES, ("launcher", LAUNCHER_SOURCE))]
    manifest = " ".join(f"{name} {len(data)}" for name, data in parts).encode()
    return str(len(manifest)).encode().ljust(HEADER) + manifest + b"".join(data for _, data in parts)
