"""A verdict is what the program did, read after the test whatever stopped it.

Rules (docs/sandbox.md): a test that reached its memory cap (an OOM kill, a limit hit counted by
the kernel, a peak within a huge page of the cap, or a peak above the memory limit) is MLE, even
when the CPU clock or the wall backstop stopped it first; otherwise the clocks give TLE.
"""

import dataclasses
import signal

import pytest

from backend.grading.judge import JudgeTest, _verdict
from backend.grading.limits import JudgeLimits
from backend.sandbox import docker_backend
from backend.sandbox.backends import open_session
from backend.sandbox.result import RunResult

LIMITS = JudgeLimits(time_limit_s=1.0, memory_mb=64)
CLEAN = RunResult(signal=None, exit_code=0, cpu_s=0.1, wall_s=0.2, mem_mb=10.0, wall_backstop_fired=False,
                  stdout="3\n", stderr="", accounting="cgroup-v1", oom_killed=False, cap_hit=False)  # fmt: skip
KILLED_BY_CLOCK = {"signal": signal.SIGKILL, "exit_code": None, "cpu_s": 1.05}
KILLED_BY_WALL = {"signal": signal.SIGKILL, "exit_code": None, "cpu_s": 0.3, "wall_backstop_fired": True}


@pytest.mark.parametrize(
    ("changes", "verdict"),
    [
        ({}, None),
        (KILLED_BY_CLOCK, "TLE"),
        (KILLED_BY_WALL, "TLE"),
        ({**KILLED_BY_CLOCK, "cap_hit": True}, "MLE"),  # held at the cap, then out of time
        ({**KILLED_BY_WALL, "cap_hit": True}, "MLE"),
        ({**KILLED_BY_CLOCK, "mem_mb": 70.0}, "MLE"),  # above the limit, below the cap
        ({**KILLED_BY_CLOCK, "oom_killed": True}, "MLE"),
        ({"signal": signal.SIGKILL, "exit_code": None, "oom_killed": True}, "MLE"),
        ({"mem_mb": 64.5}, "MLE"),  # a clean exit above the limit
        ({"mem_mb": 63.0}, None),
        ({"exit_code": 1, "stderr": "MemoryError"}, "MLE"),
        ({"exit_code": 1, "stderr": "ValueError"}, "RE"),
        ({"signal": signal.SIGSEGV, "exit_code": None, "mem_mb": 60.0}, "RE"),  # near the limit: cgroups know better
        ({"signal": signal.SIGSEGV, "exit_code": None, "mem_mb": 60.0, "accounting": "rlimits"}, "MLE"),
        ({"signal": signal.SIGXFSZ, "exit_code": None}, "OLE"),
    ],
)
def test_verdict_rules(changes, verdict):
    assert _verdict(dataclasses.replace(CLEAN, **changes), LIMITS) == verdict


def test_memory_above_the_limit_is_mle_even_when_the_clock_stops_it(run):
    """33 MB held under a 32 MB limit: above the limit, below the cap (limit + slack), so no OOM
    kill comes and the clock stops the spin. The old rule (clock first) said TLE."""
    source = "x = bytearray(33 << 20)\nwhile True:\n    pass"
    result = run(source, limits=JudgeLimits(time_limit_s=0.5, memory_mb=32))
    assert result.test_results[0].cpu_s >= 0.5 and result.test_results[0].mem_mb > 32
    assert result.verdict == "MLE"


def test_reaching_the_cap_is_read_from_the_cgroup(backend, request):
    """An OOM kill at the cap: the cgroup's own record says the cap was reached (on v1 kernels
    >= 6.12 memory.failcnt and memory.memsw.failcnt both stay 0 here, so the peak tells)."""
    if backend == "docker":
        request.getfixturevalue("docker_ready")
    limits = JudgeLimits(time_limit_s=5.0, memory_mb=48)
    session = open_session(backend)
    try:
        assert session.load("python", "x = bytearray(1 << 30)", limits.for_compile()).ok
        res = session.run(limits.for_test(), "")
    finally:
        session.close()
    assert res.oom_killed and res.cap_hit, res
    assert res.mem_mb >= 48
    assert _verdict(res, limits) == "MLE"


@pytest.mark.docker
def test_docker_without_a_readable_cgroup_says_so(docker_ready, monkeypatch):
    """A host that cannot read the container's cgroup: rlimits inside the container, announced in
    `accounting`; a 1 GB allocation is still MLE (address-space cap) and a sum still AC."""
    from backend.grading.judge import Program, judge
    from backend.sandbox import cgroups

    def unreadable(*_):
        raise PermissionError(13, "Permission denied")

    docker_backend.remove_containers()
    monkeypatch.setattr(cgroups.SandboxCgroup, "of_process", unreadable)
    monkeypatch.setattr(docker_backend, "_unreadable", [])
    try:
        tests = [JudgeTest("1 2\n", "3\n")]
        big = judge(Program("x = bytearray(1 << 30)"), tests, LIMITS, backend="docker")
        ok = judge(Program("a, b = map(int, input().split())\nprint(a + b)"), tests, LIMITS, backend="docker")
    finally:
        docker_backend.remove_containers()
    assert big.verdict == "MLE" and ok.verdict == "AC"
    for result in (big, ok):
        assert result.accounting.startswith("rlimits (docker: the container's cgroup is unreadable here")
