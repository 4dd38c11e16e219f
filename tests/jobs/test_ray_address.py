"""The user's cluster as Ray defines it (issue #58): RAY_ADDRESS exported and no --ray-address
joins it (ray.init refuses num_cpus then) or stops in one line naming it; a cluster whose second
node cannot import this checkout still runs a sweep, because the code travels in the job's
runtime_env; a folder only this machine holds is refused in one line before any work is placed."""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from backend.errors import UserError
from backend.jobs import runner
from backend.records import Job, Sample
from tests.jobs.conftest import sweep
from tests.jobs.ray_cluster import hiding, loopback_cluster, venv_python, worker_node

pytestmark = pytest.mark.slow  # Ray clusters of their own (each about 20 s to start on 2 busy cores)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def driver(monkeypatch):
    import ray

    monkeypatch.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "1")  # Linux's default; a join may turn it off
    yield ray
    ray.shutdown()


def test_a_dead_RAY_ADDRESS_stops_the_sweep_command_in_one_line(endpoints, jobs_db, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "RAY_TMPDIR"} | {
        "RAY_ADDRESS": "127.0.0.1:1", "FLAB_DB": str(jobs_db.path), "PYTHONPATH": str(ROOT)}  # fmt: skip
    argv = [sys.executable, "-m", "backend", "sweep", "--low", endpoints[0], "--high", endpoints[1],
            "--alphas", "0.5", "--executor", "ray"]  # fmt: skip
    began = time.monotonic()
    done = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    took = time.monotonic() - began
    assert took < 90, took
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "no Ray cluster answers at 127.0.0.1:1" in lines[0] and "RAY_ADDRESS" in lines[0], lines[0]


def test_RAY_ADDRESS_of_a_live_loopback_head_is_where_the_sweep_runs(driver, endpoints, jobs_db, monkeypatch):
    with loopback_cluster() as (address, _):
        monkeypatch.setenv("RAY_ADDRESS", address)
        job = runner.create_job(jobs_db, sweep(endpoints, alphas="0.5", executor="ray"))  # no ray_address
        runner.run_job_here(jobs_db, job.id)
        assert jobs_db.get(Job, job.id).status == "done", jobs_db.get(Job, job.id).error
        assert driver.get_runtime_context().gcs_address == address  # joined, not a cluster of its own
        assert driver.cluster_resources()["CPU"] == 2  # the head's CPUs: nothing was declared by the driver
        assert len(jobs_db.select(Sample, {"experiment_id": job.experiment_id})) == 1 * 2 * 2


CLIENT = """
import sys, ray
from backend.sweep.executors import connect_ray
connect_ray(None)  # RAY_ADDRESS=ray://HOST:PORT, as Ray Client reads it
print("joined", ray.util.client.ray.is_connected(), ray.cluster_resources().get("CPU"))
"""


def test_a_ray_client_address_in_RAY_ADDRESS_is_joined_through_ray_client(tmp_path):
    """In a process of its own: a Ray Client connection is process-wide."""
    from tests.jobs.ray_cluster import free_port

    client = free_port()
    with loopback_cluster(client_port=client):
        env = os.environ | {"RAY_ADDRESS": f"ray://127.0.0.1:{client}", "PYTHONPATH": str(ROOT)}
        done = subprocess.run([sys.executable, "-c", CLIENT], env=env, cwd=tmp_path, capture_output=True, text=True,
                              timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "joined True 2.0"  # a Ray Client session, the head's CPUs


def installed_backend() -> Path:
    """Where a Python without this checkout on its path imports `backend` from (the venv may hold
    an editable install of another checkout): a node that must not import the project hides it."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", "import backend; print(backend.__file__)"], env=env, cwd="/tmp",
                          capture_output=True, text=True)  # fmt: skip
    return Path(done.stdout.strip()).parent if done.returncode == 0 else ROOT / "backend"


@pytest.fixture(scope="module")
def two_nodes(tmp_path_factory):
    """A head with no CPUs (so every task and actor lands on the second node) and a second node
    that sees neither this checkout, nor any installed `backend`, nor the folder `hidden`."""
    hidden = tmp_path_factory.mktemp("only-here")
    hide = [str(ROOT), str(installed_backend()), str(hidden)]
    cannot = subprocess.run([*hiding(hide), "--chdir", "/tmp", venv_python(), "-c", "import backend"],
                            env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, capture_output=True,
                            text=True)  # fmt: skip
    assert cannot.returncode != 0 and "No module named 'backend'" in cannot.stderr  # only shipped code can work
    with loopback_cluster(cpus=0) as (address, temp), worker_node(address, temp, hide):
        yield address, hidden


def test_a_sweep_finishes_on_a_node_that_cannot_import_the_checkout(two_nodes, driver, endpoints, jobs_db):
    address, _ = two_nodes
    job = runner.create_job(jobs_db, sweep(endpoints, alphas="0.5", executor="ray", ray_address=address))
    runner.run_job_here(jobs_db, job.id)
    assert jobs_db.get(Job, job.id).status == "done", jobs_db.get(Job, job.id).error
    assert driver.cluster_resources()["CPU"] == 2  # the second node's: the merge, engine and judging ran there
    assert len(driver.nodes()) == 2
    assert len(jobs_db.select(Sample, {"experiment_id": job.experiment_id})) == 1 * 2 * 2


def test_a_folder_only_this_machine_holds_is_refused_in_one_line(two_nodes, driver, endpoints, jobs_db):
    address, hidden = two_nodes
    low = shutil.copytree(endpoints[0], hidden / "low")
    job = runner.create_job(jobs_db, sweep((str(low), endpoints[1]), alphas="0.5", executor="ray", ray_address=address))
    began = time.monotonic()
    with pytest.raises(UserError) as refused:
        runner.run_job_here(jobs_db, job.id)
    line = str(refused.value)
    assert "\n" not in line and line.startswith(f"{low} is not the same folder on Ray node 127.0.0.1"), line
    assert time.monotonic() - began < 120
    assert jobs_db.select(Sample, {"experiment_id": job.experiment_id}) == []


def test_rl_trains_on_a_node_that_cannot_read_the_drivers_database(two_nodes, driver, tmp_path):
    """`rl --executor ray` (issue #65, failure 5): the training task lands on the second node (the
    head has no CPUs), which sees neither the database's folder nor the repository's db/ (Ray ships
    the code without it). Before: the task opened the driver's DuckDB path there and failed (here
    `database folder … does not exist`; where the folder is shared, `FileNotFoundError …
    db/schema.sql`). Now the driver stores what the task writes to output_dir."""
    from backend.lab.tiny import make_tiny_checkpoint
    from backend.records import Checkpoint, Metric, Problem, Test
    from backend.rl.spec import RLSpec
    from backend.store import Store

    address, hidden = two_nodes
    (hidden / "rl").mkdir()
    store = Store(hidden / "rl" / "jobs.duckdb")  # a folder only this machine holds
    store.put([Problem(id="t/one", bench="t", title="One", statement="Print 1.", time_limit_s=1.0)])
    store.put([Test(problem_id="t/one", idx=0, input="x\n", output="1\n", input_len=2, tier=1, is_public=True)])
    out = tmp_path / "out"  # every node's: the run's checkpoints and metrics.jsonl
    spec = RLSpec(base=str(make_tiny_checkpoint(tmp_path / "base")), output_dir=str(out), reward="R_inf", bench="t",
                  steps=2, num_generations=2, per_device_train_batch_size=2, max_completion_length=8, save_steps=1,
                  gpus=0, executor="ray", ray_address=address)  # fmt: skip
    job = runner.create_job(store, spec)
    runner.run_job_here(store, job.id)  # the head has no CPUs: the 1-CPU training task ran on the second node
    done = store.get(Job, job.id)
    assert done.status == "done" and done.progress["train"] == done.progress["train"] | {"done": 2, "total": 2}
    from backend.merge.checkpoints import checkpoint_id
    from backend.merge.io import CheckpointFolder, content_hash

    # a row per content: every reward here is 0 (8 tokens hold no program), so no step moves a weight and
    # checkpoint-1, checkpoint-2 and final are one checkpoint, first seen as checkpoint-1, last at step 2
    ids = {checkpoint_id(content_hash(CheckpointFolder(out / name))) for name in ("checkpoint-1", "final")}
    rows = {c.id: c for c in store.select(Checkpoint, {"experiment_id": job.experiment_id})}
    assert (out / "final" / "model.safetensors").is_file() and ids <= set(rows)
    final = rows[checkpoint_id(content_hash(CheckpointFolder(out / "final")))]
    assert final.step == 2 and final.kind == "trained"
    steps = {m.step for m in store.select(Metric, {"experiment_id": job.experiment_id}) if m.name == "reward_mean"}
    assert steps == {1, 2}  # rank 0's metrics.jsonl, stored by the driver
