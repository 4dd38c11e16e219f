"""One job, its own GPUs: the lease, CUDA_VISIBLE_DEVICES before CUDA starts, and TRL's refusal of a
process that sees several GPUs (reproduced on CPU by the stand-in of tests/rl/cuda_standin.py)."""

import os
import signal
import subprocess
import sys
import time

import pytest

from backend.errors import UserError
from backend.records import Job, Problem, Test
from backend.rl.spec import RLSpec
from tests.rl.cuda_standin import eight_gpus

ECHO = Problem(id="t/one", bench="t", title="One", statement="Print 1.", time_limit_s=1.0)


def tiny_task(store, tmp_path):
    from backend.lab.tiny import make_tiny_checkpoint

    base = make_tiny_checkpoint(tmp_path / "base")
    store.put([ECHO])
    store.put([Test(problem_id="t/one", idx=0, input="x\n", output="1\n", input_len=2, tier=1, is_public=True)])
    return base


@pytest.mark.slow
def test_trl_refuses_a_process_that_sees_eight_gpus_and_trains_in_one_that_sees_one(store, tmp_path, monkeypatch):
    """The refusal the review met on an 8-GPU node, reproduced: TRL's check reads transformers'
    n_gpu, which counts the devices CUDA_VISIBLE_DEVICES leaves visible."""
    from backend.rl.rewards import SandboxReward
    from backend.rl.task import prepare
    from backend.rl.trainer import grpo_trainer

    base = tiny_task(store, tmp_path)
    eight_gpus(monkeypatch)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    spec = RLSpec(base=str(base), output_dir=str(tmp_path / "out"), bench="t", steps=1, num_generations=2,
                  per_device_train_batch_size=2, max_completion_length=8, precision="fp32",
                  gradient_checkpointing="off")  # fmt: skip
    _, task = prepare(store, spec)
    reward = SandboxReward(task.judged, spec.reward, spec.backend)
    with pytest.raises(ValueError, match=r"does not support `nn\.DataParallel`"):
        grpo_trainer(task, [reward], {"use_vllm": False}, use_cpu=False, progress=False, callbacks=[])
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "5")
    trainer = grpo_trainer(task, [reward], {"use_vllm": False}, use_cpu=False, progress=False, callbacks=[])
    assert trainer.args.n_gpu == 1


@pytest.mark.slow
def test_a_gpus_1_job_on_an_eight_gpu_node_trains_on_one(store, tmp_path, monkeypatch):
    """A `--gpus 1` job on a node whose 8 GPUs are all visible: its lease names one GPU in
    CUDA_VISIBLE_DEVICES before training starts, so TRL sees one (today's code trained with all 8
    visible: TRL's refusal above), and the lease ends with the job."""
    from backend.jobs import runner
    from backend.rl import trainer as trainer_module

    base = tiny_task(store, tmp_path)
    answers = eight_gpus(monkeypatch)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")  # restored to the test's own value afterwards
    seen = []
    real = trainer_module.grpo_trainer

    def recording(task, *a, **kw):
        trainer = real(task, *a, **kw)
        seen.append((os.environ.get("CUDA_VISIBLE_DEVICES"), trainer.args.n_gpu))
        return trainer

    monkeypatch.setattr(trainer_module, "grpo_trainer", recording)
    spec = RLSpec(base=str(base), output_dir=str(tmp_path / "out"), bench="t", steps=1, num_generations=2,
                  per_device_train_batch_size=2, max_completion_length=8, save_steps=1, seed=1, precision="fp32",
                  gradient_checkpointing="off")  # fmt: skip
    job = runner.create_job(store, spec)
    runner.run_job_here(store, job.id)
    assert store.get(Job, job.id).status == "done", store.get(Job, job.id).error
    assert seen == [("0", 1)]  # one GPU visible, and transformers counted one
    assert answers[0] == 8 and "CUDA_VISIBLE_DEVICES" not in os.environ  # the node's 8; the lease is gone


HOLD = """
import os, sys, time
from pathlib import Path
from backend.gpus import lease_gpus
lease = lease_gpus(Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "wait", sys.argv[4], poll_s=0.1)
print(os.environ["CUDA_VISIBLE_DEVICES"], flush=True)
time.sleep(600)
"""


def hold(folder, count: int, mode: str, label: str, pool: str) -> subprocess.Popen:
    env = os.environ | {"CUDA_VISIBLE_DEVICES": pool}  # the node's pool, as a user or Ray restricts it
    return subprocess.Popen([sys.executable, "-c", HOLD, str(folder), str(count), mode, label], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip


def test_concurrent_local_jobs_get_disjoint_gpus_and_a_kill_9_frees_them(tmp_path):
    """Two job processes at once get different GPUs; a third finding none free is refused in one
    line naming the holders, or waits; kill -9 of a holder frees its GPU at once."""
    from backend.gpus import lease_gpus

    folder, started = tmp_path / "gpus", []
    try:
        first = hold(folder, 1, "refuse", "job-a", "3,6")
        started.append(first)
        a = first.stdout.readline().strip()
        second = hold(folder, 1, "refuse", "job-b", "3,6")
        started.append(second)
        b = second.stdout.readline().strip()
        assert {a, b} == {"3", "6"}  # disjoint, both of the pool
        with pytest.raises(
            UserError, match=r"only 0 of this node's 2 are free \(GPU 3: pid \d+ \(job-\w\), GPU 6: pid"
        ):
            lease_gpus(folder, 1, wait=False, label="job-c", pool=["3", "6"])
        waiting = hold(folder, 1, "wait", "job-c", "3,6")
        started.append(waiting)
        time.sleep(1.0)
        assert waiting.poll() is None  # still waiting
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        got = waiting.stdout.readline().strip()
        assert got == a  # the killed job's GPU, freed by the kernel with its process
    finally:
        for p in started:
            p.kill()
            p.wait()


def test_a_lease_sets_and_restores_cuda_visible_devices(tmp_path, monkeypatch):
    from backend.gpus import gpus_wanted, lease_gpus

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1,2,3")
    lease = lease_gpus(tmp_path, 2, wait=False, pool=["0", "1", "2", "3"])
    assert lease.gpus == ["0", "1"] and os.environ["CUDA_VISIBLE_DEVICES"] == "0,1"
    other = lease_gpus(tmp_path, 2, wait=False, pool=["0", "1", "2", "3"])
    assert other.gpus == ["2", "3"]
    with pytest.raises(UserError, match="asks for 5 GPU"):
        lease_gpus(tmp_path, 5, wait=False, pool=["0", "1", "2", "3"])
    other.release()
    lease.release()
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "0,1,2,3"
    lease_gpus(tmp_path, 4, wait=False, pool=["0", "1", "2", "3"]).release()  # all four free again
    spec = RLSpec(base="b", output_dir="o", gpus=0.5)
    assert gpus_wanted(spec) == 1 and gpus_wanted(spec.model_copy(update={"gpus": 0})) == 0
    assert gpus_wanted(RLSpec(base="b", output_dir="o", gpus=4, num_generations=4, per_device_train_batch_size=4)) == 4
    # a local Ray cluster runs on this node: its job leases like a local one; a user's cluster owns its GPUs
    assert gpus_wanted(spec.model_copy(update={"executor": "ray"})) == 1
    assert gpus_wanted(spec.model_copy(update={"executor": "ray", "ray_address": "127.0.0.1:6379"})) == 0


def test_a_job_refused_gpus_is_refused_before_it_exists(store, tmp_path, monkeypatch):
    """--gpu-busy refuse (the default): with every GPU of the node leased, creating the job is one
    line naming the holders, and no job row is written; --gpu-busy wait creates it (it waits when it runs)."""
    from backend.jobs import runner
    from backend.lab.tiny import make_tiny_checkpoint

    base = make_tiny_checkpoint(tmp_path / "base")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,6")  # the node's pool
    holder = hold(store.path.parent / "jobs" / "gpus", 2, "refuse", "job-busy", "3,6")
    try:
        assert holder.stdout.readline().strip() == "3,6"
        spec = RLSpec(
            base=str(base), output_dir=str(tmp_path / "out"), num_generations=2, per_device_train_batch_size=2
        )
        with pytest.raises(UserError, match=r"only 0 of this node's 2 are free \(GPU 3: pid \d+ \(job-busy\)"):
            runner.create_job(store, spec)
        assert store.count(Job) == 0
        assert runner.create_job(store, spec.model_copy(update={"gpu_busy": "wait"})).status == "queued"
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.slow  # two tiny checkpoints and a job through the runner
def test_a_local_sweep_job_leases_a_gpu_apart_from_a_running_job(store, tmp_path, monkeypatch):
    """A sweep is a local job too: on the stand-in 8-GPU node with GPU 0 held by another job's
    process, the sweep's pipeline runs with CUDA_VISIBLE_DEVICES naming one other GPU (its one
    engine's tensor_parallel_size), and the lease ends with the job."""
    from backend.jobs import runner
    from backend.lab.tiny import make_tiny_checkpoint
    from backend.specs import validate_spec
    from backend.sweep import pipeline
    from backend.sweep.spec import SweepSpec

    low, high = (str(make_tiny_checkpoint(tmp_path / name, seed=s)) for name, s in (("low", 1), ("high", 2)))
    eight_gpus(monkeypatch)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")  # the whole node, restored to the test's own value afterwards
    seen = []
    monkeypatch.setattr(pipeline, "run_pipeline", lambda *a, **kw: seen.append(os.environ.get("CUDA_VISIBLE_DEVICES")))
    holder = hold(store.path.parent / "jobs" / "gpus", 1, "refuse", "job-rl", "0")
    try:
        assert holder.stdout.readline().strip() == "0"
        job = runner.create_job(store, validate_spec(SweepSpec, {"low": low, "high": high, "alphas": "0.5"}))
        runner.run_job_here(store, job.id)
    finally:
        holder.kill()
        holder.wait()
    assert store.get(Job, job.id).status == "done", store.get(Job, job.id).error
    assert seen == ["1"] and "CUDA_VISIBLE_DEVICES" not in os.environ
