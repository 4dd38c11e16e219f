"""Where the sandboxes' cgroups go, detected once per judge process.

Layouts, detected at run time from /proc/self/mountinfo and /proc/self/cgroup:
- cgroup v2: the unified hierarchy with the cpu, memory and pids controllers. The judge's own
  cgroup becomes the parent; one with processes of its own (a systemd service, a login scope, a
  container) is first delegated: its processes move to a child leaf (`flab-judge`). The peak is
  measured by resetting memory.peak (kernel >= 6.12) or, where it cannot be reset, by a fresh
  cgroup per test that the launcher moves into (its peak starts at zero);
- cgroup v1: separate cpuacct, memory and pids hierarchies (this project's machines);
- neither usable (not root, no delegation): `detect()` says why and the judge falls back to
  rlimits accounting, once and loudly.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

PREFIX = "flab-"
CONTROLLERS = ("cpu", "memory", "pids")  # roles; v1 counts CPU with the cpuacct controller
V1_CONTROLLER = {"cpu": "cpuacct", "memory": "memory", "pids": "pids"}
JUDGE_LEAF = "flab-judge"  # where a delegating judge moves its cgroup's own processes (v2)
# How the memory peak of one test is read (the accounting label says which):
PEAK_RESET = "reset"  # v1 max_usage_in_bytes, v2 memory.peak (kernel >= 6.12): reset per test
PEAK_PER_TEST = "per-test"  # v2 memory.peak of a fresh child cgroup per test (kernels that cannot reset it)
PEAK_NONE = "none"  # v2 without memory.peak (kernel < 5.19): the launcher reports its largest process
PEAK_ACCOUNTING = {PEAK_RESET: "cgroup-v2", PEAK_PER_TEST: "cgroup-v2-per-test", PEAK_NONE: "cgroup-v2-largest-process"}


@dataclass(frozen=True)
class Layout:
    version: int  # 1 or 2
    parents: dict[str, Path]  # role -> the folder new cgroups are created in
    peak: str = PEAK_RESET

    @property
    def accounting(self) -> str:
        return "cgroup-v1" if self.version == 1 else PEAK_ACCOUNTING[self.peak]


def _mounts(mountinfo: str) -> list[tuple[str, Path, str, set[str]]]:
    """(fstype, mount point, root inside the hierarchy, super options) of each cgroup mount."""
    out = []
    for line in mountinfo.splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if tail and tail[0] in ("cgroup", "cgroup2"):
            out.append((tail[0], Path(fields[4]), fields[3], set(tail[2].split(",")) if len(tail) > 2 else set()))
    return out


def _own_paths(proc_cgroup: str) -> dict[str, str]:
    """controller name -> this process's cgroup path; '' is the unified (v2) hierarchy."""
    out = {}
    for line in proc_cgroup.splitlines():
        _, names, path = line.split(":", 2)
        for name in names.split(",") if names else [""]:
            out[name] = path
    return out


def _folder(mount: Path, root: str, path: str) -> Path:
    rel = os.path.relpath(path, root) if path.startswith(root) else path.lstrip("/")
    return mount if rel in (".", "") else mount / rel


def detect(mountinfo: str | None = None, proc_cgroup: str | None = None) -> Layout | str:
    """The usable layout, or one line saying why there is none."""
    if os.environ.get("FLAB_CGROUPS", "").lower() in ("0", "off", "no"):
        return "FLAB_CGROUPS=off"
    mountinfo = mountinfo if mountinfo is not None else Path("/proc/self/mountinfo").read_text()
    proc_cgroup = proc_cgroup if proc_cgroup is not None else Path("/proc/self/cgroup").read_text()
    mounts, own = _mounts(mountinfo), _own_paths(proc_cgroup)
    unified = next(((m, r) for t, m, r, _ in mounts if t == "cgroup2"), None)
    if unified and set(CONTROLLERS) <= set(_read(unified[0] / "cgroup.controllers").split()):
        return _v2_layout(_folder(*unified, own.get("", "/")))
    parents = {}
    for role, ctrl in V1_CONTROLLER.items():
        found = next(((m, r) for t, m, r, opts in mounts if t == "cgroup" and ctrl in opts), None)
        if not found:
            return f"no cgroup v2 with {', '.join(CONTROLLERS)} and no cgroup v1 {ctrl} hierarchy"
        parents[role] = _folder(*found, own.get(ctrl, "/"))
    if not all(os.access(p, os.W_OK) for p in parents.values()):
        return f"cgroup v1 folders under {parents['memory'].parent} are not writable (run the judge as root)"
    return Layout(1, parents)


def _v2_layout(own: Path) -> Layout | str:
    """v2 needs a parent with the controllers enabled for its children, and a parent with
    processes of its own cannot enable them ("no internal processes"): FLAB_CGROUP_PARENT names
    a delegated cgroup; otherwise the judge's own cgroup, delegated first if it has processes."""
    explicit = os.environ.get("FLAB_CGROUP_PARENT")
    # a judge started after another one delegated runs in that one's leaf: their parent is shared
    parent = Path(explicit) if explicit else own.parent if own.name == JUDGE_LEAF else own
    try:
        if not set(CONTROLLERS) <= set(_read(parent / "cgroup.subtree_control").split()):
            _enable_controllers(parent, delegate=not explicit)
        peak = _peak_mechanism(parent)
    except OSError as exc:
        if explicit:
            return f"cgroup v2: cannot use FLAB_CGROUP_PARENT={explicit} ({exc.strerror})"
        return (
            f"cgroup v2: cannot enable {', '.join(CONTROLLERS)} for children of {parent} ({exc.strerror}); "
            "start the judge with `systemd-run --user --scope -p Delegate=yes COMMAND`, or set FLAB_CGROUP_PARENT "
            "to a delegated cgroup with no processes of its own"
        )
    return Layout(2, dict.fromkeys(CONTROLLERS, parent), peak)


def _enable_controllers(parent: Path, delegate: bool) -> None:
    """Enable cpu, memory and pids for the parent's children. A cgroup with processes of its own
    refuses (EBUSY); the judge's own cgroup is then delegated, the usual step: its processes move
    into a child leaf, `flab-judge`, and the sandboxes become that leaf's siblings."""
    value = " ".join(f"+{c}" for c in CONTROLLERS)
    for _ in range(10):  # again when a process forked in the parent while the others moved
        try:
            _write(parent / "cgroup.subtree_control", value)
            return
        except OSError as exc:
            if exc.errno != errno.EBUSY or not delegate:
                raise
            busy = exc
        leaf = parent / JUDGE_LEAF
        leaf.mkdir(exist_ok=True)
        for pid in _read(parent / "cgroup.procs").split():
            with contextlib.suppress(ProcessLookupError):  # it exited meanwhile
                _write(leaf / "cgroup.procs", pid)
    raise busy


def _peak_mechanism(parent: Path) -> str:
    """Whether memory.peak can be reset (kernel >= 6.12; EINVAL before), tried on a throwaway child.
    FLAB_CGROUP_PEAK=per-test chooses a fresh cgroup per test where a reset would work too."""
    probe = parent / f"{PREFIX}{os.getpid()}-probe"
    probe.mkdir(exist_ok=True)
    try:
        if not (probe / "memory.peak").exists():
            return PEAK_NONE
        if os.environ.get("FLAB_CGROUP_PEAK") == PEAK_PER_TEST:
            return PEAK_PER_TEST
        try:
            _write(probe / "memory.peak", "reset\n")
        except OSError:  # EINVAL as root; EACCES for a delegated user (the file is read-only there)
            return PEAK_PER_TEST
        return PEAK_RESET
    finally:
        probe.rmdir()


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _write(path: Path, value: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def systemd_scope_prefix() -> list[str]:
    """The command that starts a judge in a delegated cgroup where it could not delegate its own:
    a user on a v2-only host under systemd, whose cgroup belongs to systemd. [] where nothing is
    needed (root, v1, a delegated cgroup already, FLAB_CGROUP_PARENT) or systemd is not there."""
    unified = Path("/sys/fs/cgroup")
    if os.geteuid() == 0 or os.environ.get("FLAB_CGROUP_PARENT") or not (unified / "cgroup.controllers").exists():
        return []
    own = _folder(unified, "/", _own_paths(Path("/proc/self/cgroup").read_text()).get("", "/"))
    if os.access(own / "cgroup.subtree_control", os.W_OK) or not Path("/run/systemd/system").is_dir():
        return []
    if not shutil.which("systemd-run"):
        return []
    return ["systemd-run", "--user", "--scope", "--quiet", "--collect", "-p", "Delegate=yes", "--"]


if __name__ == "__main__":  # scripts/run_dashboard.sh: the prefix for `make run`
    print(shlex.join(systemd_scope_prefix()))
