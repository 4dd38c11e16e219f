import os
import shutil
import subprocess
import time

import pytest

from backend.sandbox.judge import JudgeTest, Program, judge
from backend.sandbox.limits import JudgeLimits

BACKENDS = ["bwrap", "docker"]


@pytest.fixture(scope="session")
def docker_ready():
    """Start a private Docker daemon and build the sandbox image (tests/sandbox/docker_daemon.py)."""
    from tests.sandbox.docker_daemon import ensure_daemon_and_image

    return ensure_daemon_and_image()


@pytest.fixture(params=BACKENDS)
def backend(request):
    if request.param == "docker":
        request.getfixturevalue("docker_ready")
    return request.param


@pytest.fixture
def run(backend):
    """run(source, tests, ...) -> JudgeResult on the backend under test."""

    def _run(source, tests=None, language="python", limits=None, **kw):
        tests = tests if tests is not None else [JudgeTest("1 2\n", "3\n")]
        return judge(Program(source, language), tests, limits or JudgeLimits(time_limit_s=1.0), backend=backend, **kw)

    return _run


def nobody_processes() -> list[str]:
    out = subprocess.run(["ps", "-u", "65534", "-o", "pid=,comm="], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if line.strip()]


@pytest.fixture
def host_guard(tmp_path):
    """Snapshot what a hostile program might touch on the host, and check it after the test."""
    canary = tmp_path / "canary.txt"
    canary.write_text("untouched")
    os.chmod(tmp_path, 0o777)
    before_tmp = set(os.listdir("/tmp"))
    before_procs = set(nobody_processes())  # a docker worker's long-lived launcher may be here
    yield canary
    assert canary.read_text() == "untouched"
    deadline = time.monotonic() + 3  # the kernel tears a namespace down asynchronously
    while not set(nobody_processes()) <= before_procs and time.monotonic() < deadline:
        time.sleep(0.05)
    assert set(nobody_processes()) <= before_procs, "a sandboxed process outlived its judge"
    leaked = {n for n in set(os.listdir("/tmp")) - before_tmp if n.startswith(("flab-", "pwned"))}
    assert not leaked
    assert not os.path.exists("/pwned")


def have_docker() -> bool:
    return shutil.which("dockerd") is not None
