"""Starting the dashboard and Chromium for the browser tests: fixtures (registered by conftest.py)
and helpers. Playwright drives Debian's Chromium, never a downloaded one."""

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOTS = os.environ.get("FLAB_SCREENSHOTS")  # `make screenshots` sets it; `make test` writes no picture


def shoot(page, name: str, **options) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / name), **options)


LAB = ROOT / "artifacts" / "lab"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def server(populated, db_path, tmp_path):
    yield from serve(db_path, tmp_path)


@pytest.fixture
def lab_server(lab_copy, db_path, tmp_path):
    """The dashboard on a database holding only the committed miniature lab (what `make run` shows)."""
    lab_copy(db_path)
    yield from serve(db_path, tmp_path)


@pytest.fixture
def cold_server(populated, db_path, tmp_path):
    """A fresh server that no browser has opened yet."""
    yield from serve(db_path, tmp_path, warm=False)


def serve(db_path, tmp_path, warm: bool = True):
    port = free_port()
    # the server `make run` starts (its file watcher off: a watcher that rewalks the tree on every
    # inotify overflow took most of a core, and the Jobs page's reload with it)
    env = {
        **os.environ,
        "FLAB_DB": str(db_path),
        "FLAB_CACHE": str(tmp_path / "cache"),
        "PORT": str(port),
        "HOST": "127.0.0.1",  # an inherited HOST would open it to the network, behind a token
        "PY": sys.executable,
    }
    env.pop("FLAB_TOKEN", None)
    proc = subprocess.Popen(
        ["scripts/run_dashboard.sh"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).read() == b"ok":
                break
        except OSError:
            time.sleep(0.3)
    if warm:
        warm_up(url)
    yield url
    proc.terminate()
    try:
        proc.wait(30)  # a busy server (the lab's warm-up under load) can take longer than a SIGTERM's usual second
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


@pytest.fixture
def page():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser.new_page(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
        browser.close()


def warm_up(url: str) -> None:
    """Open the app's root once (the suite's other tests; test_deep_links_work_cold needs none)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        first = browser.new_page()
        first.goto(url)
        first.get_by_text("frontier-lab").first.wait_for(timeout=60000)
        browser.close()


def rows_of(data: bytes | str) -> list[str]:
    """A downloaded CSV's lines without its provenance header (the "# " lines atop it)."""
    text = data.decode() if isinstance(data, bytes) else data
    return [line for line in text.splitlines() if not line.startswith("#")]


def wait_plots(page, count: int, timeout: int = 120000):
    page.wait_for_function(f"document.querySelectorAll('.js-plotly-plot').length >= {count}", timeout=timeout)
    page.wait_for_timeout(800)
