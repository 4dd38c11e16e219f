"""The record of one run in the sandbox (a judged test, a checker, an agent's command, a reference
build) as it crosses launcher → session → its reader. Declared here once.

launcher.py runs inside the sandbox and cannot import this package: it sends `LauncherReply`'s
fields as the keys of its JSON reply, and tests/sandbox/test_run_record.py runs a real program in a
real sandbox and checks the keys it sent against them. The session adds what the host measures
(the cgroup's `MemoryUsage`) and the output, and hands on one `RunResult`.
"""

from __future__ import annotations

from dataclasses import dataclass

# The launcher's reply also says how many bytes of output follow it on the pipe; the session reads
# them into `RunResult.stdout` and drops the count.
STDOUT_SIZE = "stdout_bytes"


@dataclass(frozen=True, slots=True)
class LauncherReply:
    """What the launcher measures of one run (launcher.run_child), under these JSON keys."""

    exit_code: int | None  # the exit status; None when a signal ended the run
    # the signal that ended it: SIGKILL (the launcher's CPU clock or wall backstop, the OOM killer),
    # SIGXCPU, SIGXFSZ (the output cap), a crash; None after a normal exit
    signal: int | None
    # CPU seconds: of every process of the run (the cgroup's counter less the launcher's own), or,
    # under rlimits accounting, of the direct child alone (wait4)
    cpu_s: float
    wall_s: float  # wall-clock seconds from the fork to the reap
    # peak memory, MB. Sent by the launcher as the largest single process's peak resident set
    # (wait4's ru_maxrss, the interpreter's pages included); where a cgroup reads a peak, the
    # session replaces it with that peak above the baseline (MemoryUsage.mem_mb). `accounting` says which.
    mem_mb: float
    # the launcher killed the run at its wall limit (limits["wall_s"], less the time its main process
    # waited for a CPU): a sleeper. A run over its CPU limit is killed too but leaves this False.
    wall_backstop_fired: bool
    stderr: str  # the last 8 kB of its standard error, decoded (errors replaced)


@dataclass(frozen=True, slots=True)
class RunResult(LauncherReply):
    """One run as the session hands it on: the launcher's measures, then the host's."""

    stdout: str  # its standard output, up to the output cap + 1 byte, decoded (errors replaced)
    # how cpu_s and mem_mb were measured: cgroup-v1, cgroup-v2, cgroup-v2-per-test,
    # cgroup-v2-largest-process (cgroup_detect.PEAK_ACCOUNTING) or rlimits… (no cgroup: mem_mb is ru_maxrss)
    accounting: str
    oom_killed: bool  # the kernel's OOM killer fired in the sandbox's cgroup during the run
    cap_hit: bool  # the run reached its cgroup's memory cap (a limit hit, or a peak within a huge page of it)


@dataclass(frozen=True, slots=True)
class MemoryUsage:
    """What the sandbox's cgroup saw of one run (cgroups.SandboxCgroup.end), copied by the session
    into RunResult's fields of the same names."""

    # the cgroup's peak above the baseline (its use when the run began, launcher and staged input
    # included), over all the run's processes; None where no peak can be read (the launcher's stands)
    mem_mb: float | None
    oom_killed: bool
    cap_hit: bool


NO_CGROUP = MemoryUsage(None, False, False)  # a session without a cgroup (rlimits accounting)


def launcher_oom_killed() -> dict:
    """The launcher's reply for a run whose launcher the OOM killer took: signal 9, nothing measured
    (the cgroup's peak, when there is one, replaces mem_mb)."""
    return {"exit_code": None, "signal": 9, "cpu_s": 0.0, "wall_s": 0.0, "mem_mb": 0.0,
            "wall_backstop_fired": False, "stderr": "", STDOUT_SIZE: 0}  # fmt: skip
