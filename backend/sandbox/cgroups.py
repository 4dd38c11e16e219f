"""One cgroup per sandbox, so that every process a program starts is counted and capped together.

rlimits are per process: a program that forks can spread CPU time and memory over up to
`max_procs` processes and each one stays under its limits. A cgroup sees them all. The host
creates it before the sandbox's launcher runs any program, moves the launcher in (so every
program process is inside from its first instruction), and per test: sets the memory cap, resets
the peak, reads the OOM-kill counter; the launcher reads the CPU counter live (through a read-only
fd) to enforce the time limit over all processes.

Where they go (v1 or v2, delegation, how the peak is read) is cgroup_detect.py's to find out.

Cgroups are named `flab-<judge pid>-<n>`; a judge that was killed leaves its cgroups behind, and
the next judge to start in the same parent removes those whose judge pid is gone.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import signal
import time
from pathlib import Path

from backend.sandbox.cgroup_detect import (  # noqa: F401  (detect, Layout: the judge's entry points)
    CONTROLLERS,
    PEAK_ACCOUNTING,
    PEAK_NONE,
    PEAK_PER_TEST,
    PEAK_RESET,
    PREFIX,
    V1_CONTROLLER,
    Layout,
    _folder,
    _mounts,
    _own_paths,
    _read,
    _write,
    detect,
)
from backend.sandbox.result import MemoryUsage

PAGE = os.sysconf("SC_PAGE_SIZE")
LAUNCHER_SLACK_MB = 8  # room for the launcher's own pages (copy-on-write) on top of the test's limit
CAP_REACHED_BYTES = 2 << 20  # a charge that fails at the cap can be one huge page: a peak this close reached it
_counter = itertools.count()
_reaped: set[Path] = set()


def _field(text: str, key: str) -> int:
    """`key N` lines (memory.events, memory.oom_control, cpu.stat)."""
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == key:
            return int(value)
    return 0


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists (one we may not signal counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


class SandboxCgroup:
    """The cgroup of one sandbox: created and removed by us (bwrap, none), or a docker
    container's own, which docker owns (`owned=False`)."""

    def __init__(self, layout: Layout, dirs: dict[str, Path], owned: bool):
        self.layout, self.dirs, self.owned = layout, dirs, owned
        self.v2 = layout.version == 2
        self.peak = layout.peak
        self._leaf: Path | None = None  # per-test peak: the cgroup the launcher and this test's program are in
        self._peak_fd: int | None = None
        self._baseline = 0  # the group's use when the test began (+ staged input): the cap's base
        self._peak_base = 0  # the same in the cgroup whose peak is read
        self._cap = 0
        self._events = (0, 0)
        self._events_at_end: tuple[int, int] | None = None  # the counters as the last end() read them
        self._fds: dict[str, int] = {}  # per-test files stay open: a test costs a few µs of syscalls
        self._written: dict[str, int] = {}  # what was last set, so unchanged values are not rewritten
        self._memsw = not self.v2 and (dirs["memory"] / "memory.memsw.failcnt").exists()

    @property
    def accounting(self) -> str:
        """How this group's CPU and memory are measured (stored with every result)."""
        return PEAK_ACCOUNTING[self.peak] if self.v2 else "cgroup-v1"

    @classmethod
    def create(cls, layout: Layout) -> SandboxCgroup:
        for parent in set(layout.parents.values()):
            if parent not in _reaped:
                reap_stale(parent)
                _reaped.add(parent)
        name = f"{PREFIX}{os.getpid()}-{next(_counter)}"
        dirs = {role: parent / name for role, parent in layout.parents.items()}
        made = []
        try:
            for d in dict.fromkeys(dirs.values()):
                d.mkdir()
                made.append(d)
            group = cls(layout, dirs, owned=True)
            if group.v2:
                with contextlib.suppress(OSError):  # no swap configured: the file is absent
                    _write(dirs["memory"] / "memory.swap.max", "0")
                if group.peak == PEAK_PER_TEST:  # the cap stays on this group; each test's peak is a child's
                    _write(dirs["memory"] / "cgroup.subtree_control", "+memory")
                    group._leaf = group._new_leaf()
            else:
                with contextlib.suppress(OSError):
                    _write(dirs["memory"] / "memory.swappiness", "0")
            return group
        except OSError:
            for d in made:
                with contextlib.suppress(OSError):
                    d.rmdir()
            raise

    @classmethod
    def of_process(cls, layout: Layout, pid: int) -> SandboxCgroup:
        """The cgroup a process is in (a docker container's), in the same layout."""
        own = _own_paths(Path(f"/proc/{pid}/cgroup").read_text())
        mounts = _mounts(Path("/proc/self/mountinfo").read_text())
        dirs = {}
        for role in CONTROLLERS:
            ctrl = "" if layout.version == 2 else V1_CONTROLLER[role]
            fstype = "cgroup2" if layout.version == 2 else "cgroup"
            mount, root = next((m, r) for t, m, r, opts in mounts if t == fstype and (not ctrl or ctrl in opts))
            dirs[role] = _folder(mount, root, own[ctrl])
        group = cls(layout, dirs, owned=False)
        if group.peak == PEAK_PER_TEST:
            group._adopt_into_leaf()
        return group

    def _adopt_into_leaf(self) -> None:
        """A docker container's cgroup already holds its processes, and a v2 cgroup with processes
        cannot enable a controller for its children: they move into the first per-test child, then
        memory is enabled below the container's cgroup (runc removes the children with it)."""
        self._leaf = self._new_leaf()
        for pid in _read(self.dirs["memory"] / "cgroup.procs").split():
            _write(self._leaf / "cgroup.procs", pid)
        _write(self.dirs["memory"] / "cgroup.subtree_control", "+memory")

    # -- membership -------------------------------------------------------------------------

    def add(self, pid: int) -> None:
        for d in [self._leaf] if self._leaf else dict.fromkeys(self.dirs.values()):
            _write(d / "cgroup.procs", str(pid))

    def pids(self) -> list[int]:
        return [int(p) for p in _read((self._leaf or self.dirs["pids"]) / "cgroup.procs").split()]

    # -- what the launcher reads ------------------------------------------------------------

    def cpu_counter(self) -> tuple[Path, str]:
        """The file whose value is the CPU time of every process in the group, and its format."""
        if self.v2:
            return self.dirs["cpu"] / "cpu.stat", "v2"
        return self.dirs["cpu"] / "cpuacct.usage", "v1"

    def cpu_seconds(self) -> float:
        path, fmt = self.cpu_counter()
        text = _read(path)
        return _field(text, "usage_usec") / 1e6 if fmt == "v2" else int(text or 0) / 1e9

    # -- per test ---------------------------------------------------------------------------

    def _fd(self, name: str, role: str = "memory") -> int:
        """The open file `name` of the group's `role` folder (names are unique across roles); kept
        by name, since building a Path per read cost more than the read itself."""
        fd = self._fds.get(name)
        if fd is None:
            path = self.dirs[role] / name
            fd = self._fds[name] = os.open(path, os.O_RDWR if os.access(path, os.W_OK) else os.O_RDONLY)
        return fd

    def _get(self, name: str) -> str:
        return os.pread(self._fd(name), 4096, 0).decode()

    def _set(self, name: str, value: int, role: str = "memory") -> bool:
        """Write `value` unless it is what was written last; whether it wrote."""
        if self._written.get(name) == value:
            return False
        os.pwrite(self._fd(name, role), str(value).encode(), 0)
        self._written[name] = value
        return True

    def _mem(self, v1_name: str, v2_name: str) -> str:
        return v2_name if self.v2 else v1_name

    def usage_file(self) -> Path:
        return self.dirs["memory"] / self._mem("memory.usage_in_bytes", "memory.current")

    def usage_bytes(self) -> int:
        return int(self._get(self._mem("memory.usage_in_bytes", "memory.current")) or 0)

    def begin(self, memory_mb: int, max_procs: int, staged_bytes: int = 0) -> int:
        """Cap memory at the current use (launcher, staged input) plus the test's limit; reset the
        peak; note the OOM counters. Returns the cap in bytes. `staged_bytes`: input the launcher
        is about to write to its tmpfs, counted (in whole pages) as if already there."""
        staged = -(-staged_bytes // PAGE) * PAGE
        self._baseline = self.usage_bytes() + staged
        cap = ((self._baseline >> 20) + 1 + memory_mb + LAUNCHER_SLACK_MB) << 20  # whole MB: rarely rewritten
        recapped = self._set_memory_cap(cap)
        self._cap = cap
        self._set("pids.max", max_procs + 1, role="pids")  # + the launcher
        self._peak_base = self._next_leaf() + staged if self.peak == PEAK_PER_TEST else self._baseline
        self._reset_peak()
        # Nothing but the launcher's cleanup ran since the last end() read the counters, under a cap
        # that has not moved: reuse them rather than read three files again (once only: a test
        # whose end() was never read leaves None here).
        reuse = not recapped and self._events_at_end is not None
        self._events = self._events_at_end if reuse else self._memory_events()
        self._events_at_end = None
        return cap

    def end(self) -> MemoryUsage:
        """What the test used, read whatever stopped it: peak memory above the baseline (None where
        the kernel cannot reset the peak), whether the OOM killer fired, and whether the cap was
        reached: a limit-hit event counted, or a peak within a huge page of the cap. The peak is
        needed on v1 because kernels >= 6.12 count failcnt only on the memory counter while a
        memsw limit equal to it fails first (memory.memsw.failcnt is never counted)."""
        oom0, hit0 = self._events
        oom, hit = self._events_at_end = self._memory_events()
        peak = self._peak_bytes()
        used = None if peak is None else max(0, peak - self._peak_base)
        return MemoryUsage(
            mem_mb=None if used is None else used / (1 << 20),
            oom_killed=oom > oom0,
            cap_hit=hit > hit0 or (used is not None and self._baseline + used >= self._cap - CAP_REACHED_BYTES),
        )

    def _memory_events(self) -> tuple[int, int]:
        """(OOM kills, limit hits) so far: v2 memory.events `oom_kill` and `max`; v1 the
        oom_control `oom_kill` and memory.failcnt + memory.memsw.failcnt."""
        if self.v2:
            events = self._get("memory.events")
            return _field(events, "oom_kill"), _field(events, "max")
        oom = _field(self._get("memory.oom_control"), "oom_kill")
        hits = int(self._get("memory.failcnt") or 0)
        if self._memsw:
            hits += int(self._get("memory.memsw.failcnt") or 0)
        return oom, hits

    def _set_memory_cap(self, cap: int) -> bool:
        """Whether the cap moved."""
        if self.v2:
            return self._set("memory.max", cap)
        limit, memsw = "memory.limit_in_bytes", "memory.memsw.limit_in_bytes"
        if not self._memsw:  # no swap accounting in this kernel
            return self._set(limit, cap)
        if self._written.get(limit) == cap and self._written.get(memsw) == cap:
            return False
        # memory + swap must stay >= memory: raise memsw first, lower it last
        order = (memsw, limit) if cap >= int(self._get(limit) or 0) else (limit, memsw)
        for name in order:
            self._set(name, cap)
        return True

    def _reset_peak(self) -> None:
        if not self.v2:
            os.pwrite(self._fd("memory.max_usage_in_bytes"), b"0", 0)  # resets it to the current use
        elif self.peak == PEAK_RESET:  # kernel >= 6.12: resets the peak as seen through this open file
            if self._peak_fd is None:
                self._peak_fd = os.open(self.dirs["memory"] / "memory.peak", os.O_RDWR)
            os.write(self._peak_fd, b"reset\n")

    def _new_leaf(self) -> Path:
        leaf = self.dirs["memory"] / f"t{next(_counter)}"
        leaf.mkdir()
        return leaf

    def _next_leaf(self) -> int:
        """Move the launcher into a fresh child cgroup, whose peak starts at zero (memory it charged
        before stays charged to the old child, inside this group's cap), and remove the old child.
        Returns the fresh child's use."""
        old, self._leaf = self._leaf, self._new_leaf()
        for pid in _read(old / "cgroup.procs").split():
            with contextlib.suppress(ProcessLookupError):
                _write(self._leaf / "cgroup.procs", pid)
        with contextlib.suppress(OSError):  # still busy: removed with the group
            old.rmdir()
        if self._peak_fd is not None:
            os.close(self._peak_fd)
        self._peak_fd = os.open(self._leaf / "memory.peak", os.O_RDONLY)
        return int(_read(self._leaf / "memory.current") or 0)

    def _peak_bytes(self) -> int | None:
        if not self.v2:
            return int(self._get("memory.max_usage_in_bytes") or 0)
        if self._peak_fd is None:  # PEAK_NONE: the launcher's largest process stands in, labelled so
            return None
        return int(os.pread(self._peak_fd, 64, 0) or 0)

    # -- teardown ---------------------------------------------------------------------------

    def remove(self, timeout_s: float = 2.0) -> None:
        """Kill what is left and remove the folders (a namespace's processes die asynchronously)."""
        if self._peak_fd is not None:
            os.close(self._peak_fd)
            self._peak_fd = None
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()
        if not self.owned:
            return
        _remove(list(dict.fromkeys(self.dirs.values())), self, timeout_s)


def _remove(dirs: list[Path], group: SandboxCgroup | None, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    for d in dirs:
        children = [c for c in d.iterdir() if c.is_dir()] if d.is_dir() else []  # per-test cgroups
        _remove(children, None, max(0.0, deadline - time.monotonic()))
        while True:
            try:
                d.rmdir()
                break
            except FileNotFoundError:
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                for pid in (int(p) for p in _read(d / "cgroup.procs").split()):
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                time.sleep(0.002)


_STALE = re.compile(rf"^{re.escape(PREFIX)}(\d+)-\d+$")


def reap_stale(parent: Path) -> list[str]:
    """Remove cgroups of judges that no longer run (a kill -9 leaves them). Returns their names."""
    removed = []
    for entry in sorted(parent.iterdir()) if parent.is_dir() else []:
        match = _STALE.match(entry.name)
        if match and entry.is_dir() and not pid_alive(int(match.group(1))):
            with contextlib.suppress(OSError):
                _remove([entry], None, timeout_s=1.0)
                removed.append(entry.name)
    return removed
