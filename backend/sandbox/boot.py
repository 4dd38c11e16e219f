"""How a sandbox's interpreter gets its launcher (launcher.py).

Every test is a fork of the launcher, and each page the launcher holds is mapped into that fork
and unmapped at its exit. Started as `python3 -c SOURCE`, the interpreter keeps the syntax tree of
SOURCE for as long as SOURCE runs (CPython frees a `-c` string's tree only when its code returns,
and the launcher's never does), and the compiler's freed pages cannot be handed back around it.
So the interpreter starts from `BOOT`, a few lines whose tree is small, which read the launcher's
source from the control pipe, compile it (that tree is freed at once) and run it: 3.8 MB of
private memory after a test against 5.2 MB (tests/sandbox/test_hot_path.py measures both).
"""

from __future__ import annotations

from pathlib import Path

LAUNCHER_SOURCE = (Path(__file__).parent / "launcher.py").read_text()
SANDBOX_PYTHON = "/usr/bin/python3"  # Debian's interpreter: readable by nobody, outside our venv
HEADER = 12  # the source's size in bytes, as decimal digits padded with spaces

BOOT = f"""import os
def _take(n):
    data = b""
    while len(data) < n:
        chunk = os.read(0, n - len(data))
        if not chunk:
            raise SystemExit("the host sent no launcher")
        data += chunk
    return data
exec(compile(_take(int(_take({HEADER}))).decode(), "launcher.py", "exec"))
"""


def launcher_command(python: str, workdir: str, *args: str) -> list[str]:
    return [python, "-I", "-S", "-c", BOOT, workdir, *args]


def launcher_image(source: str = LAUNCHER_SOURCE) -> bytes:
    """What BOOT reads first: the launcher's source, framed."""
    data = source.encode()
    return str(len(data)).encode().ljust(HEADER) + data
