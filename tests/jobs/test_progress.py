"""A resumed job's ETA counts only the work still to do; detached job processes are reaped."""

import sys
import time

import psutil

from backend.jobs import runner
from backend.records import Job
from backend.store import Store
from backend.sweep.pipeline import Progress


def test_eta_after_resume_counts_only_the_work_left(tmp_path):
    store = Store(tmp_path / "p.duckdb")
    store.put([Job(id="j", kind="sweep", status="running")])
    progress = Progress(store, "j")
    progress.set_total("judge", 100)
    progress.reuse("judge", 90)  # judged by the run before the resume
    progress.stages["judge"]["started"] -= 10  # this run has been going for 10 s ...
    progress.advance("judge", 5)  # ... and judged 5: 0.5/s, so the 5 left take 10 s
    progress.flush("judge", force=True)
    p = store.get(Job, "j").progress["judge"]
    assert p["done"] == 95 and p["total"] == 100
    assert 0.45 < p["rate"] <= 0.5 and 9.9 < p["eta_s"] < 11.5  # a loaded machine adds a little time


def test_a_finished_detached_process_is_reaped(tmp_path):
    with open(tmp_path / "log", "w") as log:
        pid = runner.spawn([sys.executable, "-c", "pass"], log)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            status = psutil.Process(pid).status()
        except psutil.NoSuchProcess:
            return  # gone, not <defunct>
        time.sleep(0.1)
    raise AssertionError(f"pid {pid} is still there as {status}")
