"""Servers a job starts (`--serve`): a free loopback port, a process group of their own, the job's GPUs,
ready when /v1/models answers, refused in one line with their log's last lines, and stopped whole
(every process of the group gone) before stop() returns, or by the kernel when the job dies."""

import json
import os
import signal
import subprocess
import sys
import urllib.request

import psutil
import pytest

from backend.errors import UserError
from backend.rollout.servers import ServerProcess, check_template, group_members
from tests.conftest import ROOT, wait_until

STANDIN = f"{sys.executable} -m tests.rollout.openai_standin --model {{model}} --port {{port}}"


@pytest.fixture(autouse=True)
def _in_the_repository(monkeypatch):
    monkeypatch.chdir(ROOT)  # `-m tests.rollout.openai_standin` resolves from the checkout


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_a_server_runs_on_the_jobs_gpus_in_its_own_group_and_stops_whole(monkeypatch):
    """A child of the server (a worker, as vLLM's engine core is) is in its group and ends with it."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")  # what a job's lease exports (backend/gpus.py)
    command = f"sh -c 'sleep 300 & exec {STANDIN}'"
    server = ServerProcess(command, "ckpt-a", echo=False).start()
    pid = server.proc.pid
    assert os.getpgid(pid) == pid != os.getpgid(os.getpid())  # a group of its own
    members = {p.pid for p in group_members(pid)}
    assert pid in members and len(members) == 2  # the server and its sleeping child
    with urllib.request.urlopen(server.url + "/v1/models") as r:
        (model,) = json.load(r)["data"]
    assert (model["id"], model["owned_by"]) == ("ckpt-a", "3")  # its model, and the lease's GPUs
    assert server.url.startswith("http://127.0.0.1:")
    server.stop()
    assert all(gone(p) for p in members) and group_members(pid) == []


def test_a_server_that_never_answers_is_refused_in_one_line_with_its_log_tail():
    code = "print('loading weights 1/2'); print('loading weights 2/2', flush=True); import time; time.sleep(300)"
    command = f'{sys.executable} -c "{code}" ' + "{model} {port}"
    server = ServerProcess(command, "ckpt", start_timeout_s=3, echo=False)
    with pytest.raises(UserError) as err:
        server.start()
    message = str(err.value)
    assert "\n" not in message and "did not answer" in message and "within 3 s" in message
    assert message.endswith("its log ends: loading weights 1/2 | loading weights 2/2")
    assert server.proc is None  # stopped, group and all


def test_a_server_that_exits_says_its_code_and_last_lines():
    code = "import sys; print('torch.OutOfMemoryError: CUDA out of memory'); sys.exit(3)"
    command = f'{sys.executable} -c "{code}" ' + "{model} {port}"
    with pytest.raises(
        UserError, match=r"exited with code 3 .*its log ends: torch.OutOfMemoryError: CUDA out of memory"
    ):
        ServerProcess(command, "ckpt", echo=False).start()
    with pytest.raises(UserError, match="cannot start 'no-such-server-binary'"):
        ServerProcess("no-such-server-binary {model} --port {port}", "ckpt", echo=False).start()


@pytest.mark.parametrize(
    ("template", "words"),
    [
        ("vllm serve {model}", "serve needs {port}"),
        ("vllm serve --port {port}", "serve needs {model}"),
        ("vllm serve {model} --port {port} --x {gpu}", "unknown placeholder {gpu}"),
        ("vllm serve {model --port {port}", "write literal braces"),
    ],
)
def test_a_template_must_name_model_and_port_and_nothing_unknown(template, words):
    with pytest.raises(UserError, match=words.replace("{", r"\{").replace("}", r"\}")):
        check_template(template)


def test_every_placeholder_is_filled():
    server = ServerProcess("s {model} --port {port} --host {host} --seed {seed} --tp {tensor_parallel_size}",
                           "/m", seed=7, tensor_parallel_size=2)  # fmt: skip
    server.port = 8123
    assert server.argv == ["s", "/m", "--port", "8123", "--host", "127.0.0.1", "--seed", "7", "--tp", "2"]


def test_a_server_whose_job_is_killed_is_ended_by_the_kernel(tmp_path):
    """kill -9 of the job's process runs none of its cleanup: the server's parent-death signal ends it."""
    script = (
        "import sys, time; from backend.rollout.servers import ServerProcess; "
        f"s = ServerProcess({STANDIN!r}, 'm', echo=False).start(); print(s.proc.pid, flush=True); time.sleep(300)"
    )
    job = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        server_pid = int(job.stdout.readline())
        assert not gone(server_pid)
    finally:
        job.send_signal(signal.SIGKILL)
        job.wait()
    wait_until(lambda: gone(server_pid), timeout=20, what="the orphaned server to end")
