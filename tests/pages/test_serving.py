"""Where `make run` serves the dashboard (scripts/run_dashboard.sh), and the token gate when it is
open to the network: the listening address read from the kernel's socket table, the gate in Chromium."""

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.pages.browser import ROOT, free_port

SCRIPT = ROOT / "scripts" / "run_dashboard.sh"


def listening(port: int) -> set[str]:
    """The local addresses (kernel hex notation) of the sockets listening on `port`."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                found.add(address)
    return found


def start(db_path, tmp_path, **env):
    port = free_port()
    proc = subprocess.Popen([str(SCRIPT)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "FLAB_DB": str(db_path), "FLAB_CACHE": str(tmp_path / "cache"),
                                 "PORT": str(port), "PY": sys.executable, **env})  # fmt: skip
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1).read() == b"ok":
                return proc, port
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise AssertionError("the dashboard did not start")


def stop(proc) -> str:
    proc.terminate()
    out, _ = proc.communicate(timeout=20)
    return out


def test_make_run_listens_on_localhost_only(populated, db_path, tmp_path):
    proc, port = start(db_path, tmp_path, FLAB_TOKEN="")
    try:
        assert listening(port) == {"0100007F"}  # 127.0.0.1, and nothing else
    finally:
        out = stop(proc)
    assert "token" not in out


pytestmark = pytest.mark.browser


@pytest.fixture
def open_server(populated, db_path, tmp_path):
    proc, port = start(db_path, tmp_path, HOST="0.0.0.0", FLAB_TOKEN="")  # a token generated and printed
    yield proc, port
    stop(proc)


def test_open_server_needs_its_token(open_server, page):
    proc, port = open_server
    assert listening(port) == {"00000000"}  # 0.0.0.0: every interface
    printed = proc.stdout.readline() + proc.stdout.readline()
    token = printed.split("?token=")[1].split()[0]
    assert len(token) >= 24
    base = f"http://127.0.0.1:{port}"
    wrong = token[:-1] + ("y" if token.endswith("x") else "x")  # a token ending in x is 1 run in 64
    for link in ("/", "/frontier?exp=exp-dash", f"/frontier?exp=exp-dash&token={wrong}"):
        page.goto(base + link)
        page.get_by_text("needs its access token").wait_for(timeout=60000)
        page.wait_for_timeout(1500)
        main = page.locator("[data-testid='stMain']").inner_text()
        assert "Experiments" not in main and "dashboard test sweep" not in main, link
        assert page.locator(".js-plotly-plot").count() == 0, link
        assert (
            page.locator("section[data-testid='stSidebar']").count() == 0
            or "Jobs" not in page.locator("section[data-testid='stSidebar']").inner_text()
        )
    page.goto(f"{base}/frontier?exp=exp-dash&token={token}")
    page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length >= 3", timeout=120000)
    assert "needs its access token" not in page.locator("[data-testid='stMain']").inner_text()
    page.locator("section[data-testid='stSidebar']").get_by_role("link", name="Churn").click()
    page.wait_for_url("**/churn?**", timeout=30000)
    page.reload()  # a new session: the token in the URL lets it in again
    page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length >= 1", timeout=120000)
