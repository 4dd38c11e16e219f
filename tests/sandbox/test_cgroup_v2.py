"""cgroup v2 hosts: how the peak is read on each kernel, and a judge that starts in a leaf cgroup
(a systemd service, a login scope, a container) delegating for itself. These run where the only
hierarchy is v2, as root: `scripts/v2vm.sh` boots such a kernel (`make test-v2`, and CI's v2
subset); on a v1 host they are skipped."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from backend.grading.judge import JudgeTest
from backend.grading.limits import JudgeLimits
from backend.sandbox import cgroup_detect, cgroups
from backend.sandbox.backends import open_session

ROOT = Path(__file__).resolve().parents[2]
LAYOUT = cgroups.detect()
V2 = isinstance(LAYOUT, cgroups.Layout) and LAYOUT.version == 2
pytestmark = pytest.mark.skipif(not V2, reason=f"needs cgroup v2 accounting ({getattr(LAYOUT, 'accounting', LAYOUT)})")


def kernel() -> tuple[int, int]:
    major, minor = os.uname().release.split(".")[:2]
    return int(major), int(minor)


def test_the_peak_mechanism_is_the_kernels():
    """memory.peak can be reset from 6.12 on (the kernel's changelog); before, a fresh cgroup per
    test (memory.peak exists from 5.19); and the result says which."""
    if os.environ.get("FLAB_CGROUP_PEAK"):
        pytest.skip("FLAB_CGROUP_PEAK chooses the mechanism")
    expected = "reset" if kernel() >= (6, 12) else "per-test" if kernel() >= (5, 19) else "none"
    assert LAYOUT.peak == expected, (os.uname().release, LAYOUT.peak)
    assert LAYOUT.accounting == cgroup_detect.PEAK_ACCOUNTING[expected]


def test_each_test_is_measured_from_zero(run):
    """Three tests of one program in one sandbox: 60 MB, then 10 MB, then 61 MB (tests run in
    ascending input length). A peak carried over from the first test would read 60 MB for the second."""
    source = "n = int(input())\nb = bytearray(n << 20)\nfor i in range(0, len(b), 4096):\n    b[i] = 1\nprint(n)\n"
    tests = [JudgeTest(pad + f"{n}\n", f"{n}\n") for pad, n in (("", 60), (" ", 10), ("  ", 61))]
    result = run(source, tests, limits=JudgeLimits(time_limit_s=10.0, memory_mb=256))
    assert result.verdict == "AC", [t.detail for t in result.test_results]
    mems = [t.mem_mb for t in result.test_results]
    assert 55 <= mems[0] <= 100 and mems[1] < 30 and 55 <= mems[2] <= 100, mems


@pytest.mark.docker
def test_a_containers_peak_is_read_as_the_judges_and_its_cgroup_goes_with_it(docker_ready):
    """docker's own container cgroup is measured by the kernel's mechanism too: on kernels that
    cannot reset memory.peak its processes move into a fresh child per test (before, the container
    was labelled cgroup-v2-largest-process: one process's RSS). When the container is removed, its
    cgroup goes, per-test children included."""
    per_test = LAYOUT.peak == cgroup_detect.PEAK_PER_TEST
    session = open_session("docker")
    group, seen = session.cgroup, []
    try:
        assert session.accounting == LAYOUT.accounting
        assert session.load("python", "print(input())", JudgeLimits().for_compile()).ok
        for text in ("a", "b"):
            assert session.run(JudgeLimits().for_test(), text + "\n").stdout == text + "\n"
            (launcher,) = group.pids()
            own = Path("/sys/fs/cgroup" + Path(f"/proc/{launcher}/cgroup").read_text().strip().removeprefix("0::"))
            assert (own.parent if per_test else own) == group.dirs["memory"], own
            seen.append(own)
        assert seen[0] != seen[1] if per_test else seen[0] == seen[1], seen
    finally:
        session.destroy()
    deadline = time.monotonic() + 5  # the container's runtime removes its cgroup as it goes
    while group.dirs["memory"].exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not group.dirs["memory"].exists()


LEAF_JUDGE = """
import os, sys
from backend.grading.judge import Program, JudgeTest, judge
from backend.grading.limits import JudgeLimits
child = ("import os, time\\nif os.fork() == 0:\\n    s = time.process_time()\\n"
         "    while time.process_time() - s < 3:\\n        pass\\n    os._exit(0)\\nos.wait()\\nprint(3)\\n")
r = judge(Program(child), [JudgeTest("", "3")], JudgeLimits(time_limit_s=1.0))
print(r.verdict, r.test_results[0].cpu_s, r.accounting)
print(open("/proc/self/cgroup").read().strip())
"""


def test_a_judge_in_a_leaf_cgroup_delegates_for_itself(tmp_path):
    """A judge started in a leaf cgroup with controllers available (as systemd starts a service)
    and no FLAB_CGROUP_PARENT: it moves itself into `flab-judge`, enables the controllers, and a
    child burning 3 s under a 1 s limit is stopped at ~1 s (issue 47: before, it fell back to
    rlimits and the child ran its full 3 s)."""
    service = LAYOUT.parents["memory"] / f"flab-service-{os.getpid()}"
    service.mkdir()
    try:
        env = {k: v for k, v in os.environ.items() if k not in ("FLAB_CGROUP_PARENT", "FLAB_CGROUP_PEAK")}
        start = [
            "sh",
            "-c",
            'echo $$ > "$1/cgroup.procs" && exec "$2" -c "$3"',
            "sh",
            service,
            sys.executable,
            LEAF_JUDGE,
        ]
        out = subprocess.run(start, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        verdict, cpu_s, accounting, own = out.stdout.split()
        assert "no cgroup accounting" not in out.stderr, out.stderr
        assert accounting.startswith("cgroup-v2"), accounting
        assert verdict == "TLE" and 1.0 <= float(cpu_s) <= 1.5, (verdict, cpu_s)
        assert own.endswith(f"/{service.name}/{cgroup_detect.JUDGE_LEAF}"), own
    finally:
        cgroups._remove([service], None, timeout_s=5.0)
