"""Fault injection: each case breaks a write on purpose and states what must survive it.

- ENOSPC in a merge (a 1 MB tmpfs): one line; no folder in the merge cache, registered or hidden.
- kill -9 of a merge mid-write: the next sweep rebuilds the merge whole and never uses the half-written folder.
- a database held by another writer: CLI reads give one line naming the holder, in bounded time; a store write
  waits, then lands once the holder leaves, or stops with one line and keeps every earlier row.
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from backend.errors import UserError
from backend.merge.cache import MergeCache
from backend.merge.engine import sweep
from backend.merge.space import gb, merged_bytes
from backend.merge.spec import Merge, alpha_folder
from backend.records import Checkpoint as CheckpointRow
from backend.store import Store
from tests.conftest import ROOT, run_cli
from tests.merge.conftest import make_checkpoint

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")


@pytest.fixture
def small_tmpfs(tmp_path):
    where = tmp_path / "full"
    where.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(where)], check=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


@needs_root
def test_merge_into_a_full_disk_gives_one_line_and_caches_nothing(tmp_path, small_tmpfs):
    low = make_checkpoint(tmp_path / "low", seed=1, hidden_size=128, intermediate_size=512, vocab_size=2048)
    high = make_checkpoint(tmp_path / "high", seed=2, hidden_size=128, intermediate_size=512, vocab_size=2048)
    cache = MergeCache(small_tmpfs / "merges")
    spec = Merge.at_alpha(low, high, 0.5)
    with pytest.raises(UserError) as err:
        cache.get([spec], progress=False)
    need, free = gb(merged_bytes(spec)), gb(shutil.disk_usage(small_tmpfs).free)
    assert str(err.value) == (
        f"no space for the merge under {small_tmpfs / 'merges'}: {need} needed, {free} free; "
        "free space or write elsewhere"
    )
    assert cache.entries() == []
    assert list(small_tmpfs.iterdir()) == []  # no partial folder, not even the cache's own


@needs_root
def test_merge_out_on_a_full_disk_leaves_nothing_behind(tmp_path, small_tmpfs):
    """`merge --alphas 0.5,1.5 --out X` writes X/alpha_0.5 and X/alpha_1.5 (MergeConfig.merges); on a
    disk they do not fit: one line naming both numbers, and no X. Before: X was left behind, empty."""
    low = make_checkpoint(tmp_path / "low", seed=1, hidden_size=128, intermediate_size=512, vocab_size=2048)
    high = make_checkpoint(tmp_path / "high", seed=2, hidden_size=128, intermediate_size=512, vocab_size=2048)
    specs = [Merge.at_alpha(low, high, a) for a in (0.5, 1.5)]
    with pytest.raises(UserError) as err:
        sweep(specs, [small_tmpfs / "X" / alpha_folder(a) for a in (0.5, 1.5)], progress=False)
    need, free = gb(2 * merged_bytes(specs[0])), gb(shutil.disk_usage(small_tmpfs).free)
    assert str(err.value).startswith(f"no space for 2 merges under {small_tmpfs / 'X'}: {need} needed, {free} free")
    assert list(small_tmpfs.iterdir()) == []


def test_a_merge_that_fails_mid_write_removes_the_folders_it_made(tmp_path):
    """An error after the merge began writing (a tensor overflows float16 at α = 1e5) leaves neither
    its partial folders nor the parent folders it created for its outputs."""
    low = make_checkpoint(tmp_path / "low", seed=1, dtype=torch.float16)
    high = make_checkpoint(tmp_path / "high", seed=2, dtype=torch.float16)
    outs = [tmp_path / "new" / "X" / alpha_folder(a) for a in (0.5, 1e5)]
    with pytest.raises(UserError, match="non-finite"):
        sweep([Merge.at_alpha(low, high, a) for a in (0.5, 1e5)], outs, progress=False)
    assert not (tmp_path / "new").exists()


@needs_root
@pytest.mark.slow  # a job in this process (torch, transformers): about 9 s
def test_a_sweep_whose_merges_do_not_fit_is_refused_before_any_merge(endpoints, jobs_db, small_tmpfs, monkeypatch):
    """Five merged folders of the test endpoints (~0.4 MB each) into a 1 MB cache: the job stops
    before its first merge, in one line naming what they need, what is free and what to try."""
    from backend.jobs import runner
    from backend.records import Job, Sample
    from tests.jobs.conftest import sweep as sweep_spec

    monkeypatch.setenv("FLAB_CACHE", str(small_tmpfs))
    job = runner.create_job(jobs_db, sweep_spec(endpoints, alphas="-0.5,0,0.5,1,1.5"))
    with pytest.raises(UserError) as err:
        runner.run_job_here(jobs_db, job.id)
    need = gb(5 * merged_bytes(Merge.at_alpha(*endpoints, 0.5)))
    assert str(err.value) == (
        f"no space for the sweep's 5 merged folders under {small_tmpfs / 'merges'}: {need} needed, "
        f"{gb(shutil.disk_usage(small_tmpfs).free)} free; try --live-switch (no folders), --merge-dtype bfloat16, "
        "or FLAB_CACHE (or FLAB_MERGE_CACHE) on a bigger disk"
    )
    assert not (small_tmpfs / "merges").exists()  # no merge began, no pin was written
    assert jobs_db.get(Job, job.id).status == "failed"
    assert jobs_db.select(Sample, {"experiment_id": job.experiment_id}) == []


KILLABLE_MERGE = textwrap.dedent("""
    import sys
    from backend.merge.cache import MergeCache
    from backend.merge.spec import Merge
    root, low, high = sys.argv[1:]
    MergeCache(root).get([Merge.at_alpha(low, high, 1.5)], progress=False, chunk_elems=256)
""")


@pytest.mark.slow
def test_merge_killed_mid_write_is_never_used_and_rebuilt_whole(tmp_path):
    sizes = {"hidden_size": 256, "intermediate_size": 1024, "vocab_size": 4096, "num_hidden_layers": 4}
    low = make_checkpoint(tmp_path / "low", seed=1, **sizes)
    high = make_checkpoint(tmp_path / "high", seed=2, **sizes)
    root = tmp_path / "merges"
    proc = subprocess.Popen([sys.executable, "-c", KILLABLE_MERGE, str(root), str(low), str(high)], cwd=ROOT)
    deadline = time.monotonic() + 120
    while not any(f.stat().st_size for f in root.glob(".*.partial-*/*.safetensors")):
        assert proc.poll() is None and time.monotonic() < deadline, "the merge ended before it could be killed"
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    cache = MergeCache(root)
    (partial,) = root.glob(".*.partial-*")  # half-written, hidden, unused
    assert cache.entries() == [] and partial.name.endswith(f".partial-{socket.gethostname()}-{proc.pid}")

    spec = Merge.at_alpha(low, high, 1.5)
    (folder,) = cache.get([spec], progress=False)
    assert list(root.glob(".*.partial-*")) == []  # the dead merge's folder is gone
    merged = load_file(folder / "model.safetensors")
    lo, hi = load_file(low / "model.safetensors"), load_file(high / "model.safetensors")
    assert merged.keys() == lo.keys()
    for name, tensor in merged.items():  # every tensor whole: (1-α)·low + α·high, rounded to bf16
        expected = (-0.5 * lo[name].float() + 1.5 * hi[name].float()).to(torch.bfloat16)
        assert torch.allclose(tensor.float(), expected.float(), rtol=1e-2, atol=1e-2), name


HOLD_LOCK = textwrap.dedent("""
    import sys, time, duckdb
    con = duckdb.connect(sys.argv[1])
    print("holding", flush=True)
    time.sleep(float(sys.argv[2]))
""")


def hold_lock(db: Path, seconds: float) -> subprocess.Popen:
    """Another writer (as a `duckdb` shell would be) holding the database file."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(db), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "holding"
    return proc


@pytest.fixture
def stored_db(db_path):
    store = Store(db_path)
    store.put([CheckpointRow(id="ck-1", path="/x", kind="trained", label="one")])
    return db_path


@pytest.mark.slow
def test_cli_read_of_a_locked_database_names_the_holder(stored_db):
    holder = hold_lock(stored_db, 60)
    try:
        start = time.monotonic()
        res = run_cli("problems", "list", "--db", str(stored_db), env={"FLAB_DB_LOCK_RETRY_S": "2"})
        took = time.monotonic() - start
    finally:
        holder.kill()
        holder.wait()
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1, res.stderr
    assert f"(PID {holder.pid})" in lines[0] and "locked" in lines[0]
    assert took < 30
    assert run_cli("problems", "list", "--db", str(stored_db)).returncode == 0  # free again: reads work


def test_store_write_waits_for_the_holder_then_lands(stored_db, monkeypatch):
    holder = hold_lock(stored_db, 1.5)
    Store(stored_db, migrate=False).put([CheckpointRow(id="ck-2", path="/y", kind="trained", label="two")])
    holder.wait()
    store = Store(stored_db, migrate=False)
    assert {c.id for c in store.select(CheckpointRow)} == {"ck-1", "ck-2"}


def test_store_write_stops_with_one_line_and_keeps_every_row(stored_db, monkeypatch):
    import backend.store as store_module

    monkeypatch.setattr(store_module, "LOCK_RETRY_S", 1.0)
    holder = hold_lock(stored_db, 60)
    try:
        start = time.monotonic()
        with pytest.raises(UserError) as err:
            Store(stored_db, migrate=False).put([CheckpointRow(id="ck-2", path="/y", kind="trained", label="two")])
        assert time.monotonic() - start < 10  # bounded retries
    finally:
        holder.kill()
        holder.wait()
    assert "\n" not in str(err.value) and f"(PID {holder.pid})" in str(err.value)
    assert {c.id for c in Store(stored_db, migrate=False).select(CheckpointRow)} == {"ck-1"}


SERVER = textwrap.dedent("""
    import sys, time
    from backend.jobs import runner
    from backend.sweep.spec import SweepSpec, validate_spec
    from backend.store import Store
    db, low, high, *problems = sys.argv[1:]
    store = Store(db)
    spec = validate_spec(SweepSpec, {"low": low, "high": high, "alphas": "0,1", "problems": problems, "n": 2,
                                     "max_tokens": 24})
    job = runner.create_job(store, spec)  # what the Launch page's button calls
    runner.start(store, job.id)
    print(job.id, flush=True)
    time.sleep(600)
""")


@pytest.mark.slow
def test_a_job_outlives_the_server_that_started_it(jobs_db, endpoints):
    """The dashboard server (here: a process making the Launch page's calls) is killed with its
    whole process group mid-job; the detached job finishes, and a new reader through the Jobs
    page's API (`runner.list_jobs`) shows it running, then done."""
    from backend.jobs import runner
    from tests.jobs.conftest import PROBLEMS

    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(jobs_db.path), *endpoints, *PROBLEMS],
        cwd=ROOT, stdout=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    job_id = server.stdout.readline().strip()
    assert job_id, "the server started no job"
    os.killpg(server.pid, signal.SIGKILL)
    server.wait()

    def shown():
        return {j.id: j for j in runner.list_jobs(Store(jobs_db.path, migrate=False))}[job_id]

    seen, deadline = [], time.monotonic() + 300
    while time.monotonic() < deadline and (not seen or seen[-1] not in ("done", "failed")):
        status = shown().status
        if not seen or seen[-1] != status:
            seen.append(status)
        time.sleep(0.2)
    assert "running" in seen and seen[-1] == "done", (seen, shown().error)


def _fill(folder: Path) -> Path:
    """Fill the file system under folder until it reports ENOSPC."""
    filler = folder / "filler"
    with open(filler, "wb") as f:
        try:
            while True:
                f.write(b"\0" * (1 << 20))
                f.flush()
        except OSError:
            pass
    return filler


@pytest.mark.slow
@needs_root
def test_a_sweep_whose_store_fills_the_disk_resumes_without_loss(endpoints, tmp_path, monkeypatch):
    """The database's disk fills up mid-sweep: the job stops; once space is back, resume computes
    only what is missing and every (checkpoint, problem, sample) is there exactly once."""
    from backend.jobs import runner
    from backend.problems.build import build_builtin
    from backend.records import Evaluation, Job, Sample
    from tests.jobs.conftest import PROBLEMS, wait_for
    from tests.jobs.test_jobs import finished, sweep

    disk = tmp_path / "disk"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", str(disk)], check=True)
    try:
        monkeypatch.setenv("FLAB_CACHE", str(tmp_path / "cache"))
        store = Store(disk / "jobs.duckdb")
        build_builtin(store, only=[p.split("/")[1] for p in PROBLEMS], progress=False)
        spec = sweep(endpoints, n=4, max_tokens=64, alphas="-0.5,0,0.5,1,1.5")
        job = runner.create_job(store, spec)
        runner.start(store, job.id)
        wait_for(store, job.id, lambda j: (j.progress or {}).get("rollout", {}).get("done", 0) >= 4)
        filler = _fill(disk)
        stopped = wait_for(store, job.id, lambda j: runner.observed(j).status in ("failed", "done"))
        filler.unlink()
        if runner.observed(stopped).status == "done":
            pytest.skip("the sweep wrote nothing more after the disk filled")
        runner.resume(store, job.id)
        done = wait_for(store, job.id, finished, timeout=600)
        assert done.status == "done", done.error
        total = 5 * 2 * 4
        samples = store.select(Sample, {"experiment_id": job.experiment_id})
        keys = [(s.checkpoint_id, s.problem_id, s.sample_idx) for s in samples]
        assert len(keys) == len(set(keys)) == total
        assert store.count(Evaluation, {"experiment_id": job.experiment_id}) == total
        assert store.get(Job, job.id).status == "done"
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)
