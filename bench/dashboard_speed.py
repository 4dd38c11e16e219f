"""Dashboard render times on the 5 M-sample SYNTHETIC database of bench/analysis_speed.py,
measured in a real browser (Playwright + Debian's Chromium).

First render: after the Overview has been drawn, open each page's URL until its charts are drawn
and the script has finished (a full page load: Streamlit's frontend boots again each time).
Re-render: change a filter to a value already seen (served from the cache) until done.

    .venv/bin/python bench/dashboard_speed.py [--db /tmp/flab-analysis-bench.duckdb]
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from backend.store import Store  # noqa: E402
from bench.analysis_speed import EXP, build  # noqa: E402

PAGES = {"frontier": 3, "churn": 1, "passk": 1}
DONE = "document.querySelector('.stApp') && document.querySelector('.stApp').getAttribute('data-test-script-state') === 'notRunning'"


def serve(db: Path) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port)], cwd=ROOT,
                            env={**os.environ, "FLAB_DB": str(db)}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).read() == b"ok":
                return proc, url
        except OSError:
            time.sleep(0.2)
    raise SystemExit("streamlit did not start")


def settle(page, plots: int) -> None:
    page.wait_for_function(f"document.querySelectorAll('.js-plotly-plot').length >= {plots}", timeout=120000)
    page.wait_for_function(DONE, timeout=120000)


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser()
    parser.add_argument("--db", default="/tmp/flab-analysis-bench.duckdb")
    db = Path(parser.parse_args().db)
    if not db.exists():
        build(Store(db))
    proc, url = serve(db)
    rows = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path="/usr/bin/chromium",
                args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
            )
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(url)  # the app's first session, as after `make run`: the Overview, fully drawn
            settle(page, 1)  # (its chart of the newest experiment included, so plotly.js is loaded)
            for name, plots in PAGES.items():
                start = time.perf_counter()
                page.goto(f"{url}/{name}?exp={EXP}")
                settle(page, plots)
                first = time.perf_counter() - start
                times = []
                for value in ("hard", "all", "hard"):  # the last two changes hit the cache
                    start = time.perf_counter()
                    page.get_by_role("combobox").nth(1).click()
                    page.get_by_role("option", name=value, exact=True).click()
                    page.wait_for_timeout(50)
                    settle(page, plots)
                    times.append(time.perf_counter() - start)
                rows.append((name, first, times[-1]))
            browser.close()
    finally:
        proc.terminate()
    print("dashboard on SYNTHETIC data: 20 checkpoints x 1000 problems x 250 samples = 5,000,000 judged samples")
    for name, first, cached in rows:
        print(
            f"  {name:<9} first render {first:5.2f} s (target < 2 s)   cached filter change {cached:5.2f} s (target < 0.5 s)"
        )


if __name__ == "__main__":
    main()
