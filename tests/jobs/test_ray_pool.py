"""The Ray engine pool on this machine's own local cluster: pinned to 127.0.0.1, four fake GPUs
(Ray's RAY_OVERRIDE_RESOURCES), the transformers engine on the CPU. Each test starts its own
cluster (in the job's process, or in this one for the vLLM stand-in) and shuts it down."""

import json
import os
import signal
import time
from pathlib import Path

import psutil
import pytest

from backend.grading.judge import JudgeTest
from backend.jobs import runner
from backend.records import Evaluation, Job, Sample
from tests.jobs.conftest import PROBLEMS, finished, wait_for
from tests.jobs.conftest import sweep as jobs_sweep

pytestmark = pytest.mark.slow  # a real Ray local cluster per test: make test runs it, make test-fast does not

FOUR_GPUS = json.dumps({"CPU": 2, "GPU": 4})
LOOPBACK = {"127.0.0.1", "::ffff:127.0.0.1", "::1"}


def sweep(endpoints, **kw):
    return jobs_sweep(endpoints, **({"alphas": "-0.5,0.5,1,1.5"} | kw))  # four α: one per fake GPU


def run(store, spec, detach=True, on_running=None) -> Job:
    job = runner.create_job(store, spec)
    runner.start(store, job.id, detach=detach)
    if on_running:
        on_running(job)
    job = wait_for(store, job.id, finished, timeout=600)
    assert job.status == "done", job.error
    return job


def rows(store, job) -> dict:
    """Every stored sample and verdict of the job, keyed as the store keys them."""
    samples = store.select(Sample, {"experiment_id": job.experiment_id})
    keys = [(s.checkpoint_id, s.problem_id, s.sample_idx) for s in samples]
    assert len(keys) == len(set(keys))  # no sample stored twice
    verdicts = {(e.checkpoint_id, e.problem_id, e.sample_idx): e.verdict
                for e in store.select(Evaluation, {"experiment_id": job.experiment_id})}  # fmt: skip
    return {k: (s.completion, s.code, verdicts[k]) for k, s in zip(keys, samples, strict=True)}


@pytest.fixture(scope="module")
def reference(endpoints, tmp_path_factory):
    """The local executor's rows for the default test sweep: the same seed, so the same samples."""
    from backend.problems.build import build_builtin
    from backend.store import Store

    root = tmp_path_factory.mktemp("reference")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FLAB_CACHE", str(root / "cache"))
        store = Store(root / "jobs.duckdb")
        build_builtin(store, only=[p.split("/")[1] for p in PROBLEMS], progress=False)
        return rows(store, run(store, sweep(endpoints)))


def test_local_cluster_listens_on_loopback_only(monkeypatch, endpoints, tmp_path):
    from backend.errors import UserError
    from backend.merge.spec import Merge
    from backend.sweep.executors import connect_ray
    from backend.sweep.pool import RayExecutor

    monkeypatch.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "1")  # restored after the test
    ray = connect_ray(None)
    try:
        listening = set()
        for proc in psutil.Process().children(recursive=True):
            try:
                listening |= {(proc.name(), c.laddr.ip) for c in proc.net_connections("inet")
                              if c.status == psutil.CONN_LISTEN}  # fmt: skip
            except psutil.NoSuchProcess:
                continue
        assert {name for name, _ in listening} >= {"gcs_server", "raylet"}
        assert {ip for _, ip in listening} <= LOOPBACK, listening
        assert ray.nodes()[0]["NodeManagerAddress"] == "127.0.0.1"
        # on this cluster (no GPUs), and a user's mistake inside a task, each come back as one line
        with pytest.raises(UserError, match="the Ray cluster has no GPUs"):
            RayExecutor("transformers", gpus=2)
        monkeypatch.setenv("FLAB_CACHE", str(tmp_path / "cache"))
        with pytest.raises(UserError, match="missing") as err:
            RayExecutor("transformers").merge([Merge.at_alpha(endpoints[0], str(tmp_path / "missing"), 0.5)])
        assert "\n" not in str(err.value) and "ray::" not in str(err.value)
    finally:
        ray.shutdown()


def test_four_actors_share_a_sweep_and_store_what_the_local_executor_stores(jobs_db, endpoints, reference, monkeypatch):
    monkeypatch.setenv("RAY_OVERRIDE_RESOURCES", FOUR_GPUS)  # the job's process starts the cluster
    job = run(jobs_db, sweep(endpoints, executor="ray"))
    assert rows(jobs_db, job) == reference and len(reference) == 4 * 2 * 2
    actors = job.progress["actors"]
    assert len(actors) == 4
    assert sorted(g for a in actors.values() for g in a["gpus"]) == ["0", "1", "2", "3"]
    assert all(a["points"] == 1 and a["samples"] == 2 * 2 and a["node"] == "127.0.0.1" for a in actors.values())
    # they worked at once: some moment lies inside every actor's span of work
    assert max(a["began"] for a in actors.values()) < min(a["ended"] for a in actors.values())


def test_a_killed_actors_point_is_redone_elsewhere(jobs_db, endpoints, reference, monkeypatch):
    monkeypatch.setenv("RAY_OVERRIDE_RESOURCES", FOUR_GPUS)
    killed = {}

    def kill_one(job):
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not killed:
            actors = (jobs_db.get(Job, job.id).progress or {}).get("actors", {})
            for name, a in actors.items():
                if a.get("pid") and a.get("state") == "sampling" and not a["points"]:
                    os.kill(a["pid"], signal.SIGKILL)  # mid-point: loading its model or sampling
                    killed[name] = a["point"]
                    break
            time.sleep(0.05)

    job = run(jobs_db, sweep(endpoints, executor="ray"), on_running=kill_one)
    assert rows(jobs_db, job) == reference  # nothing twice, nothing missing, the same samples
    (name,) = killed
    actors = job.progress["actors"]
    assert actors[name]["state"] == "died" and actors[name]["points"] == 0
    assert sum(a["points"] for a in actors.values()) == 4  # its point was sampled by another actor


def test_vllm_standin_with_tensor_parallel_2(jobs_db, endpoints, monkeypatch):
    """Two engines of two GPUs each, through the vLLM stand-in in every Ray worker."""
    from backend.sweep.executors import connect_ray
    from tests.rollout import vllm_standin

    vllm_standin.install(monkeypatch)  # for the local reference, in this process
    spec = dict(engine="vllm", tensor_parallel_size=2)
    reference = rows(jobs_db, run(jobs_db, sweep(endpoints, **spec), detach=False))
    monkeypatch.setenv("RAY_OVERRIDE_RESOURCES", FOUR_GPUS)
    monkeypatch.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "1")
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parents[2]))  # the hook runs before Ray adds it
    ray = connect_ray(
        None, runtime_env={"worker_process_setup_hook": "tests.rollout.vllm_standin.install_in_ray_worker"}
    )
    try:
        job = run(jobs_db, sweep(endpoints, executor="ray", **spec), detach=False)
    finally:
        ray.shutdown()
    assert rows(jobs_db, job) == reference and len(reference) == 4 * 2 * 2
    actors = job.progress["actors"]
    assert sorted(sorted(a["gpus"]) for a in actors.values()) == [["0", "1"], ["2", "3"]]
    assert sum(a["points"] for a in actors.values()) == 4


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"tensor_parallel_size": 2}, "tensor_parallel_size > 1 needs engine vllm"),
        ({"tensor_parallel_size": 2, "engine": "vllm", "live_switch": True}, "does not shard them"),
    ],
)
def test_tensor_parallel_refusals_are_one_line(endpoints, kw, message):
    from backend.errors import UserError

    with pytest.raises(UserError, match=message) as err:
        sweep(endpoints, **kw)
    assert "\n" not in str(err.value)


def test_progress_names_each_actor_where_it_runs_and_how_fast(tmp_path):
    """What the Jobs page and `jobs watch` print for a Ray job's actors, from the job row."""
    from backend.store import Store
    from backend.sweep.pipeline import Progress

    store = Store(tmp_path / "p.duckdb")
    store.put([Job(id="j", kind="sweep", status="running", experiment_id="e")])
    progress = Progress(store, "j")
    progress.set_total("rollout", 8)
    progress.actor("engine-0", state="starting")
    progress.actor("engine-0", node="10.0.0.7", gpus=["3"], pid=1)
    progress.actor("engine-0", point="α=0.5", state="sampling")
    progress.actor("engine-0", batch_samples=4, began=100.0, ended=102.0)
    progress.actor("engine-1", node="10.0.0.8", gpus=["0", "1"], point="α=1", state="sampling")
    progress.actor("engine-1", state="idle")
    died = "The actor is dead because its worker process has died"
    progress.actor("engine-2", node="10.0.0.9", state="died", cause=died)
    job = store.get(Job, "j")
    assert list(runner.stages(job)) == ["rollout"]
    assert runner.actor_lines(job) == [
        "engine-0 on 10.0.0.7 GPU 3: sampling α=0.5, 0 point(s) done, 2.00 samples/s",
        "engine-1 on 10.0.0.8 GPU 0,1: idle, 1 point(s) done",
        "engine-2 on 10.0.0.9: died (The actor is dead because its worker process has died), 0 point(s) done",
    ]


class CountedTest(JudgeTest):
    """A test that counts how often this process serialises it (Ray pickles a task's arguments and
    a put's value in the driver)."""

    pickled = 0

    def __reduce__(self):
        CountedTest.pickled += 1
        return JudgeTest, (self.input, self.output)


def test_each_problems_tests_travel_once_through_the_object_store():
    from backend.grading.judge import Program
    from backend.grading.pool import JudgeJob
    from backend.sweep.pool import RayExecutor

    tests = {
        problem: [CountedTest(f"{i}\n", f"{i + shift}\n") for i in range(40)] for problem, shift in (("a", 0), ("b", 1))
    }
    echo = Program("print(input())")  # right on every test of a, wrong on b's first
    jobs = [JudgeJob((problem, k), echo, tests[problem]) for problem in tests for k in range(6)]
    executor = RayExecutor("transformers")
    try:
        # the local cluster's workers run at the driver's priority (Ray's own default is niceness 15)
        assert executor.ray.get(executor.ray.remote(lambda: os.nice(0)).remote()) == os.nice(0)
        executor.judging.submit(jobs)
        judged = {}
        while executor.judging.pending:
            judged.update(executor.judging.collect(block=True))
    finally:
        executor.close()
        executor.ray.shutdown()
    assert {key: (r.verdict, r.first_failing_test) for key, r in judged.items()} == {
        (problem, k): ("AC", None) if problem == "a" else ("WA", 0) for problem in tests for k in range(6)
    }
    assert CountedTest.pickled == 2 * 40  # each problem's 40 tests once, not once per sample (12 × 40)
