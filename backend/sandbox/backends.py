"""Isolation backends. Each opens a Session: one launcher (launcher.py) behind a wall.

- bwrap (default): a fresh namespace set per program, run as `nobody` when we are root, so
  RLIMIT_NPROC is enforced (the kernel never enforces it for uid 0).
- docker: one long-lived container per worker (see docker_backend.py).
- none: no isolation, refused unless chosen explicitly, and loud about it.

Accounting (cgroups.py): where cgroups can be made, each bwrap/none session gets its own, and a
docker session uses its container's; every test's CPU and memory are then those of all its
processes. Elsewhere the judge says so once and falls back to per-process rlimits.
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
import tempfile
from pathlib import Path

from backend.errors import UserError
from backend.sandbox import cgroups
from backend.sandbox.boot import SANDBOX_PYTHON, launcher_command
from backend.sandbox.docker_backend import open_docker_session
from backend.sandbox.session import (  # noqa: F401  (SandboxError and Session: the sandbox's boundary types)
    SandboxError,
    Session,
    cgroup_layout,
    drop_to_nobody,
    only_child,
    popen,
)
from backend.vocab import BACKENDS


def bwrap_argv(tmpfs_mb: int, counter_arg: list[str] | None = None) -> list[str]:
    """A read-only /usr, fresh /proc and /dev, a size-capped private tmpfs, nothing else of the host."""
    argv = [
        "bwrap",
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--as-pid-1",
    ]
    argv += ["--clearenv", "--cap-drop", "ALL", "--hostname", "sandbox"]
    argv += ["--ro-bind", "/usr", "/usr", "--proc", "/proc", "--dev", "/dev"]
    for link in ("bin", "lib", "lib64", "sbin"):
        target = os.readlink(f"/{link}") if os.path.islink(f"/{link}") else None
        if target:
            argv += ["--symlink", target, f"/{link}"]
        elif os.path.isdir(f"/{link}"):
            argv += ["--ro-bind", f"/{link}", f"/{link}"]
    argv += ["--size", str(tmpfs_mb << 20), "--tmpfs", "/work", "--symlink", "/work/run", "/tmp"]
    argv += ["--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/work/run", "--setenv", "LANG", "C.UTF-8"]
    argv += ["--remount-ro", "/", "--chdir", "/work"]
    return [*argv, *launcher_command(SANDBOX_PYTHON, "/work", "--pid1", *(counter_arg or []))]


def check_backend(name: str) -> None:
    if name not in BACKENDS:
        raise UserError(f"unknown sandbox backend {name!r}; choose one of {', '.join(BACKENDS)}")
    if name == "bwrap" and not shutil.which("bwrap"):
        raise UserError("bubblewrap is not installed; run `make test` as root or `apt-get install bubblewrap`")
    if not os.path.exists(SANDBOX_PYTHON):
        raise UserError(f"{SANDBOX_PYTHON} is missing; install Debian's python3-minimal")


def open_session(backend: str = "bwrap", *, tmpfs_mb: int = 128, allow_none: bool = False) -> Session:
    check_backend(backend)
    if backend == "docker":
        return open_docker_session(tmpfs_mb=tmpfs_mb)
    if backend == "none" and not allow_none:
        raise UserError("backend 'none' has no isolation; pass --backend none explicitly to accept that")
    layout = cgroup_layout()
    group = cgroups.SandboxCgroup.create(layout) if layout else None
    try:
        return _open_local(backend, tmpfs_mb, group)
    except BaseException:
        if group:
            group.remove()
        raise


def _open_local(backend: str, tmpfs_mb: int, group: cgroups.SandboxCgroup | None) -> Session:
    """bwrap or none, with the cgroup's CPU counter opened read-only for the launcher."""
    counter_fd = os.open(group.cpu_counter()[0], os.O_RDONLY) if group else None
    counter_arg = ["--cpu-counter", f"{counter_fd}:{group.cpu_counter()[1]}"] if group else []
    pass_fds = (counter_fd,) if group else ()
    try:
        if backend == "bwrap":
            proc = popen(bwrap_argv(tmpfs_mb, counter_arg), pass_fds=pass_fds, **drop_to_nobody())
            launcher_pid = only_child(proc.pid) if group else None  # bwrap's child is the launcher
            if launcher_pid:
                pin_to_current_cpu(launcher_pid)
            cleanup = None
        else:
            print("WARNING: sandbox backend 'none' gives NO isolation; never use it on untrusted code", file=sys.stderr)
            workdir = tempfile.mkdtemp(prefix="flab-none-")
            os.chmod(workdir, 0o777)
            argv = launcher_command(SANDBOX_PYTHON, workdir, *counter_arg)
            proc = popen(argv, pass_fds=pass_fds, **drop_to_nobody())
            launcher_pid = proc.pid
            pin_to_current_cpu(launcher_pid)
            cleanup = functools.partial(shutil.rmtree, workdir, ignore_errors=True)
    finally:
        if counter_fd is not None:
            os.close(counter_fd)
    return Session(proc, cleanup=cleanup, cgroup=group, launcher_pid=launcher_pid)


def pin_to_current_cpu(pid: int) -> None:
    """Keep the launcher, and so every test it forks, on the CPU the host runs on now. Each test
    hands off host -> launcher -> child -> launcher -> host; on one CPU a hand-off is a direct
    switch, across CPUs a wake-up by interrupt (a pipe round trip here: 13 us against 51 us), and
    the child starts on the CPU whose caches hold the launcher's pages. One sandbox per core is also
    how judges keep timings steady. Sandboxes opened from different workers follow their workers'
    CPUs; docker's containers are not pinned. Best effort: a host that refuses it runs unpinned."""
    try:
        cpu = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[36])  # field 39, processor
        if cpu in os.sched_getaffinity(0):
            os.sched_setaffinity(pid, {cpu})
    except (OSError, ValueError, IndexError):
        pass
