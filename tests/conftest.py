import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# Nothing in the suite reaches the Hugging Face hub: set before any test imports huggingface_hub (it
# reads the variable once), and inherited by every CLI and job a test starts, so a path that tried
# the real hub fails at once instead of downloading. The hub tests run against a stand-in on
# 127.0.0.1 and say online or offline themselves (tests/test_hub.py hub_env).
os.environ["HF_HUB_OFFLINE"] = "1"


@pytest.fixture
def db_path(tmp_path) -> Path:
    return tmp_path / "test.duckdb"


@pytest.fixture
def store(db_path):
    from backend.store import Store

    return Store(db_path)


@pytest.fixture(autouse=True)
def _never_touch_user_db(tmp_path, monkeypatch):
    # Tests must never open the user's database, even by accident.
    monkeypatch.setenv("FLAB_DB", str(tmp_path / "default-guard.duckdb"))


def run_cli(*args: str, env: dict | None = None, timeout: float = 120):
    import subprocess

    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "backend", *args],
        cwd=ROOT,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def wait_until(condition, timeout: float = 30, interval: float = 0.05, what: str = "the condition"):
    """Poll until condition() is truthy and return its value; fail naming `what` after timeout seconds.
    Tests wait this way instead of sleeping a fixed time and hoping it was long enough."""
    import time

    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            pytest.fail(f"waited {timeout:g} s for {what}")
        time.sleep(interval)
    return value


def built_once(tmp_path_factory, name: str, build) -> Path:
    """A folder that `build(folder)` fills once per pytest run, shared by the run's pytest-xdist
    workers (each worker's basetemp is a folder of the run's): the first to ask builds it under a
    lock, the others wait and reuse it. What is built is read, never changed: a test that changes
    it works on a copy."""
    import fcntl
    import shutil

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    folder = root / f"built-once-{name}"
    with open(root / f"built-once-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / ".built").exists():
            shutil.rmtree(folder, ignore_errors=True)  # a build that failed half-way
            folder.mkdir()
            build(folder)
            (folder / ".built").touch()
    return folder


@pytest.fixture(scope="session")
def committed_lab_db(tmp_path_factory) -> Path:
    """A database holding the committed miniature lab (`lab import`, as `make run` does), imported
    once per run; `lab_copy(path)` puts a copy of it where a test writes."""
    from backend.lab.artifacts import import_results
    from backend.store import Store

    return (
        built_once(tmp_path_factory, "lab-db", lambda folder: import_results(Store(folder / "lab.duckdb")))
        / "lab.duckdb"
    )


@pytest.fixture
def lab_copy(committed_lab_db):
    """lab_copy(path): a copy of the committed lab's database at `path` (which it replaces)."""
    import shutil

    def copy(path) -> Path:
        shutil.copyfile(committed_lab_db, path)
        return Path(path)

    return copy
