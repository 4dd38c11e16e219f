import os
import shutil
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from backend.grading.judge import JudgeTest, Program, judge
from backend.grading.limits import JudgeLimits

BACKENDS = ["bwrap", pytest.param("docker", marks=pytest.mark.docker)]


@pytest.fixture(scope="session")
def docker_ready():
    """Start a private Docker daemon and build the sandbox image (tests/sandbox/docker_daemon.py);
    a daemon these tests started is stopped when the session ends, one that was running stays."""
    from tests.sandbox.docker_daemon import ensure_daemon_and_image, stop_daemon

    image, started = ensure_daemon_and_image()
    yield image
    if started:
        stop_daemon()


@pytest.fixture(params=BACKENDS)
def backend(request):
    if request.param == "docker":
        request.getfixturevalue("docker_ready")
    return request.param


@pytest.fixture
def run(backend):
    """run(source, tests, ...) -> the Judgement on the backend under test."""

    def _run(source, tests=None, language="python", limits=None, **kw):
        tests = tests if tests is not None else [JudgeTest("1 2\n", "3\n")]
        return judge(Program(source, language), tests, limits or JudgeLimits(time_limit_s=1.0), backend=backend, **kw)

    return _run


def nobody_processes() -> list[str]:
    """The machine's processes running as nobody inside a docker container (other judges' bwrap
    sandboxes on the same machine also run as nobody, and are not this test's leftovers)."""
    out = subprocess.run(["ps", "-u", "65534", "-o", "pid=,comm="], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if line.strip() and _in_docker(line.split()[0])]


def _in_docker(pid: str) -> bool:
    try:
        return "/docker" in Path(f"/proc/{pid}/cgroup").read_text()
    except OSError:
        return False


def leftovers(backend: str, before: set[str]) -> set[str]:
    """Processes a judged program left behind. bwrap/none: every sandboxed process descends from
    this test process, so any new descendant counts (other users' sandboxes on the machine do not).
    docker: container processes hang off the daemon, so compare the machine's nobody processes."""
    if backend == "docker":
        return set(nobody_processes()) - before
    return descendants() - before


def descendants() -> set[str]:
    out = set()
    for p in psutil.Process().children(recursive=True):
        try:
            if p.status() != psutil.STATUS_ZOMBIE:
                out.add(f"{p.pid} {p.name()}")
        except psutil.NoSuchProcess:
            pass
    return out


@pytest.fixture
def host_guard(tmp_path, backend):
    """Snapshot what a hostile program might touch on the host, and check it after the test."""
    canary = tmp_path / "canary.txt"
    canary.write_text("untouched")
    os.chmod(tmp_path, 0o777)
    before_tmp = set(os.listdir("/tmp"))
    # long-lived helpers that predate the program (a docker worker's launcher, multiprocessing's
    # resource tracker) are not its leftovers
    before_procs = set(nobody_processes()) if backend == "docker" else descendants()
    yield canary
    assert canary.read_text() == "untouched"
    deadline = time.monotonic() + 3  # the kernel tears a namespace down asynchronously
    while leftovers(backend, before_procs) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not leftovers(backend, before_procs), "a sandboxed process outlived its judge"
    # the none backend's work folders (flab-none-*) are another test's, on a parallel worker: the
    # backends under test here (bwrap, docker) make none
    leaked = {n for n in set(os.listdir("/tmp")) - before_tmp if n.startswith(("flab-", "pwned"))}
    leaked = {n for n in leaked if not n.startswith("flab-none-")}
    assert not leaked
    assert not os.path.exists("/pwned")


def have_docker() -> bool:
    return shutil.which("dockerd") is not None
