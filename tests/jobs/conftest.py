import time

import pytest

from backend.lab.tiny import make_tiny_checkpoint
from backend.problems.build import build_builtin
from backend.records import Job
from backend.store import Store

PROBLEMS = ["builtin/count-pairs-sum", "builtin/max-subarray"]


def sweep(endpoints, **kw):
    """A small sweep spec over the test endpoints; keywords override any field."""
    from backend.specs import validate_spec
    from backend.sweep.spec import SweepSpec

    low, high = endpoints
    data = {"low": low, "high": high, "alphas": "-0.5,0.5,1.5", "problems": PROBLEMS, "n": 2, "max_tokens": 24, **kw}
    return validate_spec(SweepSpec, data)


def finished(job):
    return job.status in ("done", "failed", "cancelled")


@pytest.fixture(scope="session")
def endpoints(tmp_path_factory):
    root = tmp_path_factory.mktemp("endpoints")
    return str(make_tiny_checkpoint(root / "low", seed=1)), str(make_tiny_checkpoint(root / "high", seed=2))


@pytest.fixture
def jobs_db(tmp_path, monkeypatch):
    monkeypatch.setenv("FLAB_CACHE", str(tmp_path / "cache"))  # merge cache and hashes stay in the test
    store = Store(tmp_path / "jobs.duckdb")
    build_builtin(store, only=[p.split("/")[1] for p in PROBLEMS], progress=False)
    return store


def wait_for(store: Store, job_id: str, predicate, timeout: float = 240.0) -> Job:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = store.get(Job, job_id)
        if predicate(job):
            return job
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} never reached the state; last: {store.get(Job, job_id)}")
