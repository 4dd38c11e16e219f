"""A user's cluster as a new user starts one (issue #65, failures 2 and 3): `ray start --head` on
127.0.0.1 in a clean environment (a HOME of its own, no FLAB_*, HF_*, VLLM_* or RAY_AUTH_*), joined
through RAY_ADDRESS by a driver that has its own settings.

Before: the cluster's tasks saw none of the driver's variables (a merge task's budget was 100 GB
whatever the driver set), actors' and tasks' own output never reached the job's log (vLLM prints
its root cause there), and a driver whose HOME held a Ray token (any local `ray.init` writes one)
failed its sweep as "its engine actor died 3 times" after minutes of dead actors."""

import json
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

import pytest

from backend.jobs import runner
from backend.records import Evaluation, Sample
from tests.jobs.conftest import PROBLEMS, finished, sweep, wait_for
from tests.jobs.ray_cluster import loopback_cluster

pytestmark = pytest.mark.slow  # a Ray cluster of its own, two job processes and a sweep

ROOT = Path(__file__).resolve().parents[2]
OWN = ("FLAB_", "HF_", "VLLM_", "RAY_", "CUDA_")  # what the clean nodes do not have


def clean_env(home: Path, **extra: str) -> dict:
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(OWN) and k != "PYTHONPATH"}
    return env | {"HOME": str(home)} | extra


@pytest.fixture(scope="module")
def clean_cluster(tmp_path_factory):
    home = tmp_path_factory.mktemp("cluster-home")
    with loopback_cluster(env=clean_env(home)) as (address, _):
        assert not (home / ".ray" / "auth_token").exists()  # started without a token: no authentication
        yield address


# the driver's own settings, each of a family the project ships (backend/sweep/cluster_env.py)
SETTINGS = {"FLAB_MERGE_CACHE_GB": "7.25", "FLAB_JUDGE_MEMORY_SHARE": "0.45", "VLLM_LOGGING_LEVEL": "WARNING",
            "CUDA_LAUNCH_BLOCKING": "1"}  # fmt: skip
KEPT_HOME = {"FLAB_DB": "/driver/only.duckdb", "HF_TOKEN": "hf_secret"}  # the driver's alone

PROBE = """
import json, os, subprocess, sys, time
import ray
from backend.sweep.executors import connect_ray
from backend.sweep.ray_errors import cause

connect_ray(None)  # RAY_ADDRESS, as the job joins

@ray.remote(num_cpus=1)
def seen(names):
    return {name: os.environ.get(name) for name in names}

print("ENV " + json.dumps(ray.get(seen.remote(json.loads(sys.argv[1])))), flush=True)

@ray.remote(num_cpus=1)
class Engine:  # as vLLM fails: its engine process prints the root cause, then LLM() raises
    def __init__(self):
        said = "import sys; print('EngineCore failed: root cause 7f3a', file=sys.stderr)"
        subprocess.run([sys.executable, "-c", said])
        raise RuntimeError("Engine core initialization failed. See root cause above.")

    def ping(self):
        return 1

try:
    ray.get(Engine.remote().ping.remote())
except Exception as exc:
    print("CAUSE " + cause(exc), flush=True)
time.sleep(5)  # the cluster's log monitor streams the actor's output within about a second
"""


def test_a_joined_clean_cluster_runs_a_disk_sweep_with_the_drivers_settings(
    clean_cluster, endpoints, jobs_db, tmp_path, monkeypatch
):
    cache = Path(os.environ["FLAB_CACHE"])  # the driver's (jobs_db's)
    for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_TMPDIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "driver-home"))  # holds no token, as the cluster
    monkeypatch.setenv("RAY_ADDRESS", clean_cluster)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    for name, value in {**SETTINGS, **KEPT_HOME}.items():
        monkeypatch.setenv(name, value)
    job = runner.create_job(jobs_db, sweep(endpoints, alphas="0.5,1.5", problems=PROBLEMS[:1], n=1, max_tokens=8,
                                           executor="ray"))  # fmt: skip
    runner.start(jobs_db, job.id)  # the job's own process, as `sweep` starts it
    job = wait_for(jobs_db, job.id, finished, timeout=600)
    log = Path(job.log_path).read_text()
    assert job.status == "done", (job.error, log[-3000:])
    assert len(jobs_db.select(Sample, {"experiment_id": job.experiment_id})) == 2
    assert len(jobs_db.select(Evaluation, {"experiment_id": job.experiment_id})) == 2
    merged = sorted(p.parent for p in (cache / "merges").glob("*/merge.json"))
    assert len(merged) == 2  # under the driver's FLAB_CACHE, kept (7.25 GB is room enough)
    # the preflight's table in the job's log: the one node, as the job's tasks see the merge cache
    table = log.split("Ray preflight, 1 node(s):\n", 1)[1].splitlines()
    assert table[0].split() == ["node", "host", "CPUs", "GPUs", "packages", "bwrap", "g++", "merge", "cache",
                                "budget", "free", "shared", "paths"]  # fmt: skip
    row = table[1]
    assert row.startswith("127.0.0.1 (") and f" {cache / 'merges'} " in row and " 7.25 GB " in row, row
    assert " torch 2." in row and "3 of 3 the same" in row, row  # both endpoints and the cache's token
    # and any task of a job joined the same way sees the driver's settings, and only those it should
    env = clean_env(tmp_path / "driver-home", RAY_ADDRESS=clean_cluster, HF_HOME=str(tmp_path / "hf"),
                    FLAB_CACHE=str(cache), **SETTINGS, **KEPT_HOME)  # fmt: skip
    names = [*SETTINGS, *KEPT_HOME, "HF_HOME", "FLAB_CACHE"]
    probe = subprocess.run([sys.executable, "-c", PROBE, json.dumps(names)], env=env, cwd=ROOT, capture_output=True,
                           text=True, timeout=300)  # fmt: skip
    out = probe.stdout + probe.stderr
    assert probe.returncode == 0, out[-3000:]
    seen = json.loads(next(line[4:] for line in probe.stdout.splitlines() if line.startswith("ENV ")))
    assert seen == {**SETTINGS, "HF_HOME": str(tmp_path / "hf"), "FLAB_CACHE": str(cache)} | dict.fromkeys(KEPT_HOME)
    # an actor's own output (vLLM's root cause) reaches the driver, and its death is said in one line
    assert "EngineCore failed: root cause 7f3a" in out, out[-3000:]
    said = next(line[6:] for line in probe.stdout.splitlines() if line.startswith("CAUSE "))
    assert said == "the actor's __init__ raised RuntimeError: Engine core initialization failed. See root cause above."


def test_a_driver_holding_a_token_is_refused_by_a_tokenless_cluster_in_one_line(clean_cluster, endpoints, jobs_db,
                                                                                tmp_path):  # fmt: skip
    """Ray 2.60 writes ~/.ray/auth_token on a local `ray.init`; a driver holding one authenticates,
    and then refuses the tokenless cluster's calls back: every actor died unstarted."""
    home = tmp_path / "driver-home"
    (home / ".ray").mkdir(parents=True)
    (home / ".ray" / "auth_token").write_text(secrets.token_hex(32))
    env = clean_env(home, RAY_ADDRESS=clean_cluster, FLAB_DB=str(jobs_db.path), FLAB_CACHE=os.environ["FLAB_CACHE"])
    argv = [sys.executable, "-m", "backend", "sweep", "--low", endpoints[0], "--high", endpoints[1], "--alphas",
            "0.5", "-n", "1", "--problem", PROBLEMS[0], "--executor", "ray"]  # fmt: skip
    began = time.monotonic()
    done = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert time.monotonic() - began < 90
    assert done.returncode == 2, (done.stdout + done.stderr)[-3000:]
    (line,) = done.stderr.strip().splitlines()
    assert f"the Ray cluster at {clean_cluster} (from RAY_ADDRESS) does not use token authentication" in line, line
    assert f"holds a Ray token ({home / '.ray' / 'auth_token'})" in line, line
    assert "RAY_AUTH_MODE=disabled" in line and "RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH, ~/.ray/auth_token" in line, line
