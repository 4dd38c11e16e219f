"""Merges that survive their sweep (issue #65, failure 1): with `--executor ray` every α is merged
by a task of its own, and each task's eviction deleted the sweep's other folders as soon as the
sweep outgrew the cache's budget (the job failed: FileNotFoundError … merge.json). Scaled down: a
budget of 2.5 merged folders, 6 α, the project's local Ray cluster on this machine's two cores."""

from pathlib import Path

import pytest

from backend.jobs import runner
from backend.merge.cache import MergeCache, folder_bytes
from backend.records import Evaluation, Sample
from tests.jobs.conftest import PROBLEMS, finished, sweep, wait_for

pytestmark = pytest.mark.slow  # a Ray local cluster, six merges and six model loads (about a minute)


def test_a_six_alpha_ray_sweep_under_a_budget_of_two_and_a_half_folders_evaluates_all_six(
    jobs_db, endpoints, monkeypatch
):
    one = folder_bytes(Path(endpoints[0]))  # a merged folder is its endpoint's size (same dtype, same files)
    monkeypatch.setenv("FLAB_MERGE_CACHE_GB", str(2.5 * one / (1 << 30)))  # the job's process and its tasks
    spec = sweep(endpoints, alphas="-0.5,0,0.5,1,1.5,2", problems=PROBLEMS[:1], n=1, max_tokens=8, executor="ray")
    job = runner.create_job(jobs_db, spec)
    runner.start(jobs_db, job.id, detach=True)
    job = wait_for(jobs_db, job.id, finished, timeout=600)
    assert job.status == "done", (job.error, Path(job.log_path).read_text()[-3000:])
    samples = jobs_db.select(Sample, {"experiment_id": job.experiment_id})
    assert len({s.checkpoint_id for s in samples}) == 6 and len(samples) == 6  # every α sampled
    assert len(jobs_db.select(Evaluation, {"experiment_id": job.experiment_id})) == 6  # and judged
    cache = MergeCache()
    kept = [size for _, size, _ in cache.entries()]
    assert len(kept) == 2 and sum(kept) <= 2.5 * one  # afterwards the budget bounds what stays (keep_merges)
    assert list((cache.root / ".pins").iterdir()) == []  # the sweep's pin went with it
