"""How the launcher (launcher.py) limits and measures one test: the rlimits a child sets, the CPU
clock over every process of the test, the wait with its wall backstop, and the cleanup after it.
Shipped into the sandbox beside the launcher (boot.py); stdlib only.
"""

import _signal
import os
import resource
import select
import sys
import time

PID1 = "--pid1" in sys.argv
TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_counter_arg():
    if "--cpu-counter" not in sys.argv:
        return None
    where, fmt = sys.argv[sys.argv.index("--cpu-counter") + 1].rsplit(":", 1)
    fd = int(where) if where.isdigit() else os.open(where, os.O_RDONLY)
    return fd, fmt


CPU_COUNTER = _cpu_counter_arg()


def rlimits(lim):
    """The test's rlimits, soft = hard so the program cannot raise them back; computed in the
    launcher, so the forked child only makes the syscalls.

    Under a cgroup the memory cap is the cgroup's, over all processes; RLIMIT_AS is then only a
    generous backstop against mapping games, so threads and runtimes that reserve address space
    they never touch work. Without one (rlimits accounting) RLIMIT_AS is the memory cap itself.
    The stack is half the memory limit (at most 1 GB): deep recursion works, and glibc, which
    sizes each thread's stack from RLIMIT_STACK, can still map a few thread stacks.
    """
    cpu = int(lim["cpu_s"]) + 1
    memory = int(lim["memory_mb"]) << 20
    caps = (
        (resource.RLIMIT_AS, 4 * memory + (1 << 30) if CPU_COUNTER else memory),
        (resource.RLIMIT_FSIZE, int(lim["output_mb"]) << 20),
        (resource.RLIMIT_NPROC, int(lim["max_procs"])),
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_NOFILE, 64),
        (resource.RLIMIT_STACK, max(8 << 20, min(memory // 2, 1 << 30))),
    )
    return ((resource.RLIMIT_CPU, (cpu, cpu + 1)), *((which, (value, value)) for which, value in caps))


def prefer_as_oom_victim():
    """Under a cgroup's memory cap the kernel kills the largest process; make it the program's,
    not the launcher's (raising one's own score needs no privilege)."""
    try:
        fd = os.open("/proc/self/oom_score_adj", os.O_WRONLY)
        os.write(fd, b"1000")
        os.close(fd)
    except OSError:
        pass


def kill_everything_else(main_pid):
    if PID1:
        try:
            os.kill(-1, _signal.SIGKILL)  # every process in the namespace but us
        except ProcessLookupError:
            pass
    else:
        try:
            os.killpg(main_pid, _signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    while True:  # reap the child, and as PID 1 every orphan reparented to us
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            if not PID1:
                return
            time.sleep(0.0005)


def cpu_seconds(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS
    except (OSError, IndexError, ValueError):
        return 0.0


def own_cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def group_cpu():
    fd, fmt = CPU_COUNTER
    text = os.pread(fd, 4096, 0).decode()
    if fmt == "v1":
        return int(text) / 1e9
    for line in text.splitlines():
        if line.startswith("usage_usec "):
            return int(line.split()[1]) / 1e6
    return 0.0


class TestClock:
    """CPU time of one test: every process of it (the cgroup's counter less this launcher's own
    CPU) or, under rlimits accounting, the direct child's."""

    def __init__(self):
        self.start = (group_cpu(), own_cpu()) if CPU_COUNTER else None

    def used(self, pid):
        if self.start is None:
            return cpu_seconds(pid)
        return (group_cpu() - self.start[0]) - (own_cpu() - self.start[1])


def runqueue_wait(pid):
    """Seconds the process spent runnable but waiting for a CPU (/proc/PID/schedstat): the wall
    backstop is for sleepers, and a busy machine's queue must not turn a computing program's
    wait into TLE."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def wait_within_limits(pid, clock, cpu_limit, wall_limit, start):
    """Wait for the child; SIGKILL it once the test's CPU time passes the limit (RLIMIT_CPU only
    has whole seconds) or the wall backstop expires: wall time less the main process's wait for a
    CPU, so that only sleeping counts. Returns True when the wall backstop fired."""
    pidfd = os.pidfd_open(pid)
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    try:
        # CPU time cannot run ahead of the wall clock by more than the thread count, so the
        # first check comes at a fraction of the limit and then every 20 ms.
        slice_s = cpu_limit / 4
        while not poller.poll(slice_s * 1000):
            elapsed = time.monotonic() - start
            if clock.used(pid) > cpu_limit + 0.02:
                os.kill(pid, _signal.SIGKILL)
                return False
            # the host gives up 10 s past the wall limit: the queue may stretch it by 8 s at most
            not_queued = elapsed - runqueue_wait(pid)
            if not_queued > wall_limit or elapsed > wall_limit + 8:
                os.kill(pid, _signal.SIGKILL)
                return True
            slice_s = min(0.02, max(0.001, wall_limit - not_queued))
        return False
    finally:
        os.close(pidfd)
