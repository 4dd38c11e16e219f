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
