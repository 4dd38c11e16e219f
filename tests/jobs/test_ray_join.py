"""Joining a user's running Ray cluster (issue #46): a cluster of the test's own, started with
`ray start` on 127.0.0.1 as a user would, joined by address and by `auto` with relative checkpoint
paths. Before: the address was rewritten to the network interface and ray.init hung for minutes,
and the merge tasks, whose working directory is Ray's, did not find `low` and `high`."""

import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

import pytest

from backend.errors import UserError
from backend.jobs import runner
from backend.records import Experiment, Job, Sample
from tests.jobs.conftest import sweep
from tests.jobs.ray_cluster import free_port, loopback_cluster

pytestmark = pytest.mark.slow  # a Ray cluster of its own (about 20 s to start on 2 busy cores)


@pytest.fixture(scope="module")
def cluster():
    with loopback_cluster() as running:
        yield running


@pytest.fixture
def driver(monkeypatch):
    """This process as the job's driver; disconnected afterwards (the cluster keeps running)."""
    import ray

    monkeypatch.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "1")  # Linux's default; a join may turn it off
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    yield ray
    ray.shutdown()


@pytest.mark.parametrize("how", ["address", "auto"])
def test_a_sweep_with_relative_paths_runs_in_a_running_loopback_cluster(
    cluster, driver, endpoints, jobs_db, monkeypatch, how
):
    address, temp = cluster
    monkeypatch.setenv("RAY_TMPDIR", temp)  # where `auto` finds the address the cluster's `ray start` recorded
    monkeypatch.chdir(Path(endpoints[0]).parent)
    spec = sweep(("low", "high"), alphas="1.5", executor="ray", ray_address=address if how == "address" else "auto")
    job = runner.create_job(jobs_db, spec)
    stored = jobs_db.get(Experiment, job.experiment_id).spec
    assert (stored["low"], stored["high"]) == endpoints  # absolute, as this driver sees them
    runner.run_job_here(jobs_db, job.id)
    assert jobs_db.get(Job, job.id).status == "done", jobs_db.get(Job, job.id).error
    assert driver.get_runtime_context().gcs_address == address  # the user's cluster, not one of ours
    assert len(jobs_db.select(Sample, {"experiment_id": job.experiment_id})) == 1 * 2 * 2  # α × problems × n


def test_a_wrong_address_fails_in_one_line_within_30_s(driver, endpoints, jobs_db):
    began = time.monotonic()
    job = runner.create_job(jobs_db, sweep(endpoints, executor="ray", ray_address=f"127.0.0.1:{free_port()}"))
    with pytest.raises(UserError) as refused:
        runner.run_job_here(jobs_db, job.id)
    assert time.monotonic() - began < 30
    line = str(refused.value)
    assert "\n" not in line and line.startswith("no Ray cluster answers at 127.0.0.1:") and "ray start --head" in line
    assert jobs_db.get(Job, job.id).status == "failed" and not driver.is_initialized()


def test_an_address_that_is_not_host_port_is_one_line(driver):
    from backend.sweep.executors import connect_ray

    with pytest.raises(UserError, match="is not HOST:PORT, ray://HOST:PORT or auto"):
        connect_ray("head-node")


JOIN = """
import sys, ray
from backend.sweep.executors import connect_ray
connect_ray(sys.argv[1])
print("joined", ray.cluster_resources().get("CPU"))
"""


def test_an_explicit_address_sends_the_token_this_machine_holds(tmp_path):
    """`ray start` turns token authentication on when the machine holds a token; Ray sends it for
    `auto` only. Before: an explicit address was joined without it (here ray.init waited past 90 s).
    In a process of its own, so this test's token mode stays out of the others'."""
    token = tmp_path / "auth_token"
    token.write_text(secrets.token_hex(32))
    env = {k: v for k, v in os.environ.items() if k != "RAY_AUTH_MODE"} | {"RAY_AUTH_TOKEN_PATH": str(token)}
    with loopback_cluster(env=env) as (address, _):
        root = Path(__file__).resolve().parents[2]
        done = subprocess.run([sys.executable, "-c", JOIN, address], env=env, cwd=root, capture_output=True,
                              text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip().endswith("joined 2.0"), done.stderr[-2000:]
