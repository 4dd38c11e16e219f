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
from tests.jobs.conftest import PROBLEMS, sweep
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


def sweep_command(endpoints, address: str, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    """`python -m backend sweep` of one α, one problem, one sample, on the cluster at `address`."""
    argv = [sys.executable, "-m", "backend", "sweep", "--low", endpoints[0], "--high", endpoints[1], "--alphas",
            "0.5", "-n", "1", "--max-tokens", "8", "--problem", PROBLEMS[0], "--executor", "ray",
            "--ray-address", address]  # fmt: skip
    return subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=600)


def test_a_token_cluster_runs_the_sweep_of_a_driver_with_its_token_and_refuses_others(endpoints, jobs_db, tmp_path):
    """`ray start` turns token authentication on when its machine holds a token. A driver with the
    same token joins by the explicit address (Ray sends the token for `auto` only: before, ray.init
    waited past 90 s) and its sweep completes; a driver with another token, or none, is refused in
    one line naming the token's sources (Ray's own AuthenticationError never reached the user)."""
    token = tmp_path / "auth_token"
    token.write_text(secrets.token_hex(32))
    home = tmp_path / "home"  # holds no token: the driver's token is the one named below
    home.mkdir()
    base = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_AUTH_", "RAY_ADDRESS"))}
    base |= {"HOME": str(home), "FLAB_DB": str(jobs_db.path)}
    with loopback_cluster(env=base | {"RAY_AUTH_TOKEN_PATH": str(token)}) as (address, _):
        done = sweep_command(endpoints, address, base | {"RAY_AUTH_TOKEN_PATH": str(token)}, tmp_path)
        assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
        assert "job-" in done.stdout and ": done" in done.stdout
        for env, said in [
            (base | {"RAY_AUTH_TOKEN": "another-token"},
             "refuses this machine's token (RAY_AUTH_TOKEN; sources in order: "
             "RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH, ~/.ray/auth_token)"),
            (base, "requires its token and this machine has none (none in RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH "
             "or ~/.ray/auth_token)"),
        ]:  # fmt: skip
            began = time.monotonic()
            refused = sweep_command(endpoints, address, env, tmp_path)
            assert refused.returncode == 2 and time.monotonic() - began < 90, refused.stderr[-3000:]
            (line,) = refused.stderr.strip().splitlines()
            assert f"the Ray cluster at {address} (from --ray-address) {said}" in line, line
