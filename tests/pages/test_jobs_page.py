"""The Jobs page during a running job, in Chromium: drawn at once, with the job's parameters."""

import time

import pytest

from backend.jobs import runner
from backend.jobs.spec import SweepSpec, validate_spec
from backend.lab.tiny import make_tiny_checkpoint
from backend.problems.build import build_builtin
from backend.records import Job

pytestmark = pytest.mark.browser


def test_jobs_page_draws_within_3s_during_a_running_job(server, store, page, tmp_path, monkeypatch):
    monkeypatch.setenv("FLAB_CACHE", str(tmp_path / "cache"))
    build_builtin(store, only=["count-pairs-sum", "max-subarray"], progress=False)
    low, high = (str(make_tiny_checkpoint(tmp_path / name, seed=s)) for name, s in (("low", 1), ("high", 2)))
    spec = validate_spec(SweepSpec, {"low": low, "high": high, "alphas": "-1:2:0.25", "n": 8, "max_tokens": 256,
                                     "problems": ["builtin/count-pairs-sum", "builtin/max-subarray"]})  # fmt: skip
    job = runner.create_job(store, spec)
    runner.start(store, job.id)
    try:
        deadline = time.monotonic() + 120
        while store.get(Job, job.id).status != "running" or not store.get(Job, job.id).progress:
            assert time.monotonic() < deadline, "the job never started"
            time.sleep(0.3)
        page.goto(f"{server}/jobs")  # the first visit loads the browser's copy of Streamlit's scripts
        page.get_by_text(job.id).first.wait_for(timeout=30000)
        times = []
        for _ in range(3):  # reloads while the job writes, as the user did
            started = time.monotonic()
            page.reload()
            page.get_by_text(job.id).first.wait_for(timeout=60000)
            page.get_by_text("α grid: -1, -0.75").first.wait_for(timeout=60000)
            times.append(time.monotonic() - started)
        # The median: this machine's 2 shared cores make single reloads range from 1.6 s to 5 s.
        assert sorted(times)[1] < 3.0, times
        assert store.get(Job, job.id).status == "running"  # it was drawn during the job, not after
        page.get_by_text("so far").first.wait_for(timeout=3000)
    finally:
        runner.cancel(store, job.id)
