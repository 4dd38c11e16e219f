"""Host admission: never run more sandboxes at once than the host's memory can hold.

Every judge process on the host (pool workers, Ray workers, an RL trainer's reward function)
records the memory cap of each test it runs in one ledger file, under an exclusive flock. A test
is admitted when the caps' unused headroom fits in a share of the memory still available:

    need + Σ_running (cap_i − used_i) ≤ share × MemAvailable

`used_i` is read from each running sandbox's cgroup (memory it already holds is no longer in
MemAvailable, so it is not counted twice). A test whose cap cannot fit even with nothing else
running is refused with one line. The share is `FLAB_JUDGE_MEMORY_SHARE` (default 0.5, so a
judge beside an RL trainer leaves it half of the host).

A sandbox session keeps its admission between its tests (one ledger round per cap, not per test),
so a judge that opens a second sandbox while the first is idle (a special judge's checker beside
the program's sandbox) would wait on a reservation of its own, which no one releases while it
waits: in a small host that would be a 600 s wait and a sandbox error. So a test that does not fit
first takes back this process's idle reservations (each holder's `yield_admission`), and waits
only on reservations that are in use.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from backend.errors import UserError
from backend.sandbox.cgroups import pid_alive

DEFAULT_SHARE = 0.5
POLL_S = 0.02


class Holder(Protocol):
    def yield_admission(self) -> bool:
        """Give the admission back if not in a test now; True when it did."""


_holders: dict[str, Holder] = {}  # this process's admitted holders, by ledger key


def ledger_path() -> Path:
    """Shared by every judge on the host: /dev/shm where it exists (memory, never a stale disk file)."""
    folder = Path("/dev/shm") if os.path.isdir("/dev/shm") else Path(tempfile.gettempdir())
    return Path(os.environ.get("FLAB_ADMISSION_LEDGER") or folder / "frontier-lab-admission.json")


def memory_share() -> float:
    raw = os.environ.get("FLAB_JUDGE_MEMORY_SHARE", str(DEFAULT_SHARE))
    try:
        share = float(raw)
    except ValueError:
        share = -1.0
    if not 0 < share <= 1:
        raise UserError(f"FLAB_JUDGE_MEMORY_SHARE must be a number in (0, 1], got {raw!r}")
    return share


def mem_available_bytes() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) << 10
    raise RuntimeError("/proc/meminfo has no MemAvailable")


def _used(entry: dict) -> int:
    try:
        return int(Path(entry["usage_file"]).read_text()) if entry.get("usage_file") else 0
    except (OSError, ValueError):
        return 0


@contextlib.contextmanager
def _locked() -> Iterator[dict]:
    path = ledger_path()
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        raw = os.pread(fd, 1 << 20, 0)
        try:
            ledger = json.loads(raw) if raw else {}
        except ValueError:  # torn by a crash mid-write: start over, the live entries re-register
            ledger = {}
        # entries of judges that died (kill -9) free their share
        ledger = {k: v for k, v in ledger.items() if pid_alive(v["pid"])}
        yield ledger
        data = json.dumps(ledger).encode()
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)
    finally:
        os.close(fd)


@contextlib.contextmanager
def admitted(
    key: str, cap_bytes: int, usage_file: str | None = None, timeout_s: float = 600.0, holder: Holder | None = None
) -> Iterator[None]:
    """Hold `cap_bytes` of the host's memory for the duration of one test (or, with a `holder`,
    until the holder gives it back because another sandbox of this process needs it)."""
    share = memory_share()
    deadline = time.monotonic() + timeout_s
    while True:
        with _locked() as ledger:
            available = mem_available_bytes()
            held = sum(max(0, e["cap"] - _used(e)) for e in ledger.values())
            in_use = sum(_used(e) for e in ledger.values())
            if cap_bytes > share * (available + in_use):
                raise UserError(
                    f"a memory limit of {cap_bytes >> 20} MB per test cannot fit on this host: "
                    f"{share:g} × {(available + in_use) >> 20} MB available; lower the memory limit "
                    "or raise FLAB_JUDGE_MEMORY_SHARE"
                )
            if cap_bytes + held <= share * available:
                ledger[key] = {"pid": os.getpid(), "cap": cap_bytes, "usage_file": usage_file}
                break
        if _reclaim_idle(key):  # outside the lock: giving one back takes it
            continue
        if time.monotonic() > deadline:
            raise UserError(f"waited {timeout_s:.0f}s for host memory for a {cap_bytes >> 20} MB sandbox")
        time.sleep(POLL_S)
    if holder is not None:
        _holders[key] = holder
    try:
        yield
    finally:
        _holders.pop(key, None)
        with _locked() as ledger:
            ledger.pop(key, None)


def _reclaim_idle(waiting: str) -> bool:
    """Take back this process's reservations that are idle; True if any was."""
    return any([holder.yield_admission() for key, holder in list(_holders.items()) if key != waiting])


def running() -> dict:
    """The ledger as it stands (for tests and `judge` diagnostics)."""
    with _locked() as ledger:
        return dict(ledger)
