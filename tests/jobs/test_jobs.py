import multiprocessing as mp
import os
import signal
import time

import psutil
import pytest

from backend.alpha import parse_alpha_grid
from backend.errors import UserError
from backend.jobs import runner
from backend.records import Checkpoint, Evaluation, Job, Sample, Test
from backend.store import Store
from backend.sweep.spec import SweepSpec, validate_spec
from tests.conftest import run_cli, wait_until
from tests.jobs.conftest import finished, sweep, wait_for


def test_alpha_grid_syntax():
    assert parse_alpha_grid("-1:2:0.5") == [-1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0]
    assert parse_alpha_grid("-0.5,0,0.5,1,1.5") == [-0.5, 0.0, 0.5, 1.0, 1.5]
    assert parse_alpha_grid("-1:0:0.5, 1.25, 0") == [-1.0, -0.5, 0.0, 1.25]


@pytest.mark.parametrize(
    "grid,message",
    [("", "empty α grid"), ("2:-1:0.5", "is reversed"), ("a,b", "'a' is not a number"),
     ("0:100:1", "more than 64 points"), ("0:1:0", "positive step"), ("0:1", "bad α range")],
)  # fmt: skip
def test_bad_grids_give_one_line_and_create_no_job(grid, message, endpoints, db_path):
    Store(db_path)
    low, high = endpoints
    out = run_cli("sweep", "--low", low, "--high", high, "--alphas", grid, "--db", str(db_path))
    assert out.returncode == 2 and message in out.stderr and out.stderr.count("\n") == 1
    assert Store(db_path).count(Job) == 0


@pytest.mark.slow
def test_bad_specs(endpoints, db_path, tmp_path):
    low, _ = endpoints
    with pytest.raises(UserError, match="same checkpoint"):
        validate_spec(SweepSpec, {"low": low, "high": low, "alphas": "0,1"})
    with pytest.raises(UserError, match=r"^n: at least 1$"):
        validate_spec(SweepSpec, {"low": low, "high": low + "x", "alphas": "0,1", "n": 0})
    out = run_cli("sweep", "--low", low, "--high", str(tmp_path / "missing"), "--alphas", "0,1", "--db", str(db_path))
    assert out.returncode == 2 and "does not exist" in out.stderr
    assert Store(db_path).count(Job) == 0


def cgroup_accounting() -> str:
    from backend.sandbox import cgroups

    layout = cgroups.detect()
    return layout.accounting if isinstance(layout, cgroups.Layout) else "rlimits"


@pytest.mark.slow
def test_sweep_end_to_end_fills_the_database(jobs_db, endpoints):
    job = runner.create_job(jobs_db, sweep(endpoints))
    runner.start(jobs_db, job.id)
    job = wait_for(jobs_db, job.id, finished)
    assert job.status == "done", job.error
    samples = jobs_db.select(Sample, {"experiment_id": job.experiment_id})
    evals = jobs_db.select(Evaluation, {"experiment_id": job.experiment_id})
    assert len(samples) == len(evals) == 3 * 2 * 2
    ckpts = {c.id: c for c in jobs_db.select(Checkpoint, {"kind": "merged"})}
    assert sorted(ckpts[e.checkpoint_id].alpha for e in evals[::4]) == [-0.5, 0.5, 1.5]
    assert {(s.checkpoint_id, s.problem_id, s.sample_idx) for s in samples} == {
        (e.checkpoint_id, e.problem_id, e.sample_idx) for e in evals
    }
    for s, e in zip(sorted(samples, key=_key), sorted(evals, key=_key), strict=True):
        assert (e.outcome == "format_failure") == (s.code is None)  # a random model mostly fails to format
        # a program that ran says how it was measured; a format failure ran nothing
        assert e.accounting == (None if s.code is None else cgroup_accounting())
        assert e.format_reason == s.extract_error  # its own column, set for a format failure only
        tests = 0 if s.code is None else jobs_db.count(Test, {"problem_id": e.problem_id})
        assert e.rewards is not None and [t.index for t in e.test_results] == list(range(tests))
    assert job.progress["judge"]["done"] == job.progress["judge"]["total"] == 12


def _key(r):
    return (r.checkpoint_id, r.problem_id, r.sample_idx)


@pytest.mark.slow
def test_kill_9_then_resume_leaves_no_duplicate_and_no_missing_rows(jobs_db, endpoints):
    spec = sweep(endpoints, n=6, max_tokens=96, alphas="-0.5,0,0.5,1,1.5")
    job = runner.create_job(jobs_db, spec)
    pid = runner.start(jobs_db, job.id)
    wait_for(jobs_db, job.id, lambda j: (j.progress or {}).get("rollout", {}).get("done", 0) >= 12)
    os.killpg(os.getpgid(pid), signal.SIGKILL)
    wait_until(
        lambda: runner.observed(jobs_db.get(Job, job.id)).status == "failed", what="the killed job seen as failed"
    )
    assert jobs_db.get(Job, job.id).status == "running"  # seen as failed; the row is left for resume to write
    partial = jobs_db.count(Sample, {"experiment_id": job.experiment_id})
    assert 0 < partial < 5 * 2 * 6
    runner.resume(jobs_db, job.id)
    job = wait_for(jobs_db, job.id, finished)
    assert job.status == "done", job.error
    total = 5 * 2 * 6
    assert jobs_db.count(Sample, {"experiment_id": job.experiment_id}) == total
    assert jobs_db.count(Evaluation, {"experiment_id": job.experiment_id}) == total
    Store(jobs_db.path).counts()  # the database opens and answers


@pytest.mark.slow
def test_cancel_stops_within_seconds_and_leaves_no_processes(jobs_db, endpoints):
    job = runner.create_job(jobs_db, sweep(endpoints, n=8, max_tokens=256, alphas="-1:2:0.25"))
    pid = runner.start(jobs_db, job.id)
    wait_for(
        jobs_db, job.id, lambda j: j.status == "running" and (j.progress or {}).get("rollout", {}).get("done", 0) > 0
    )
    pgid = os.getpgid(pid)
    start = time.monotonic()
    assert runner.cancel(jobs_db, job.id).status == "cancelled"
    assert time.monotonic() - start < 5

    def left():
        return [p for p in psutil.process_iter() if _pgid(p) == pgid and _alive(p)]

    wait_until(lambda: not left(), timeout=10, what="the cancelled job's process group to exit")
    # process_iter's attrs are read as each process is met: one that exits meanwhile is skipped,
    # not raised (other tests' sandboxes come and go beside this one)
    children = [p.info for p in psutil.process_iter(["name", "ppid"])]
    assert not any("bwrap" in (c["name"] or "") and c["ppid"] == pid for c in children)


def _alive(p) -> bool:
    try:
        return p.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _pgid(p):
    try:
        return os.getpgid(p.pid)
    except (ProcessLookupError, psutil.NoSuchProcess):
        return None


def _read_loop(path, stop_at, result):
    store, errors, reads = Store(path, migrate=False), 0, 0
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not os.path.exists(stop_at):
        try:
            store.count(Evaluation)
            store.select(Job)
            reads += 1
        except Exception:
            errors += 1
        time.sleep(0.02)
    result.put((errors, reads))


@pytest.mark.slow
def test_two_sweeps_and_a_reader_at_once(jobs_db, endpoints, tmp_path):
    stop = tmp_path / "stop"
    ctx = mp.get_context("spawn")
    result = ctx.Queue()
    reader = ctx.Process(target=_read_loop, args=(str(jobs_db.path), str(stop), result))
    reader.start()
    jobs = [runner.create_job(jobs_db, sweep(endpoints, seed=s)) for s in (1, 2)]
    for j in jobs:
        runner.start(jobs_db, j.id)
    done = [wait_for(jobs_db, j.id, finished) for j in jobs]
    stop.touch()
    errors, reads = result.get(timeout=60)
    reader.join(10)
    assert [j.status for j in done] == ["done", "done"]
    assert errors == 0 and reads > 10
    assert all(jobs_db.count(Evaluation, {"experiment_id": j.experiment_id}) == 12 for j in done)


@pytest.mark.slow
def test_ray_executor_gives_the_same_rows_as_local(jobs_db, endpoints):
    results = {}
    for executor in ("local", "ray"):
        job = runner.create_job(jobs_db, sweep(endpoints, executor=executor, alphas="0.5,1.5"))
        runner.start(jobs_db, job.id)
        job = wait_for(jobs_db, job.id, finished, timeout=400)
        assert job.status == "done", job.error
        rows = {_key(s): (s.completion, s.code) for s in jobs_db.select(Sample, {"experiment_id": job.experiment_id})}
        outs = {
            _key(e): (e.outcome, e.verdict) for e in jobs_db.select(Evaluation, {"experiment_id": job.experiment_id})
        }
        results[executor] = (rows, outs)
    assert results["ray"] == results["local"]
    assert len(results["ray"][0]) == 2 * 2 * 2


@pytest.mark.slow
def test_live_switch_sweep_matches_merged_folders(jobs_db, endpoints):
    outcomes = {}
    for keep in (True, False):
        job = runner.create_job(jobs_db, sweep(endpoints, live_switch=not keep, alphas="1.5", temperature=0.0))
        runner.start(jobs_db, job.id)
        job = wait_for(jobs_db, job.id, finished)
        assert job.status == "done", job.error
        outcomes[keep] = sorted(
            (s.checkpoint_id, s.problem_id, s.sample_idx, s.completion, e.verdict)
            for s, e in zip(*(sorted(jobs_db.select(t, {"experiment_id": job.experiment_id}), key=_key)
                              for t in (Sample, Evaluation)), strict=True)
        )  # fmt: skip
    # greedy decoding of bit-identical weights: the same ids, the same text, the same verdicts
    assert outcomes[True] == outcomes[False]
    assert len(outcomes[True]) == 2 * 2 and all(r[3] for r in outcomes[True])
    # and the weights themselves: the loaded model after the switch equals the merged folder, bit for bit
    import torch
    from safetensors.torch import load_file

    from backend.records import Checkpoint
    from backend.rollout.engines import make_engine

    (merged,) = [c for c in jobs_db.select(Checkpoint) if c.alpha == 1.5 and not c.path.startswith("live:")]
    on_disk = load_file(f"{merged.path}/model.safetensors")
    engine = make_engine("transformers", endpoints[0], alpha_switch=tuple(endpoints[:2]))
    engine.alpha_switch(*endpoints).set_alpha(1.5)
    live = dict(engine.model.named_parameters())
    assert on_disk.keys() <= live.keys() and all(torch.equal(live[k].detach(), v) for k, v in on_disk.items())
