"""Charts that follow a running sweep (issue #48, Done when 1): reloaded while a real sweep writes,
Frontier's caption, table and every chart show the same α points and sample count at each reload,
ending with all of them; then pass@k and Churn the same while a second sweep lands."""

import contextlib
import csv
import os
import re
import signal
import time
from pathlib import Path

import duckdb
import pytest

from backend.jobs import runner
from backend.lab.tiny import make_tiny_checkpoint
from backend.problems.build import build_builtin
from backend.records import Job
from backend.sweep.spec import SweepSpec, validate_spec
from tests.pages.browser import rows_of, wait_plots

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PROBLEMS = ["builtin/count-pairs-sum", "builtin/max-subarray"]
DONE = "document.querySelector('.stApp')?.getAttribute('data-test-script-state') === 'notRunning'"
CHARTS = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(gd => gd.data.map(t => ({
    name: t.name || '', custom: t.customdata ? Array.from(t.customdata, r => Array.from(r)) : null,
    x: Array.isArray(t.x) ? t.x : null, text: t.text ? Array.from(t.text) : null})))"""
NUMBER = r"-?\d+(?:\.\d+)?"
SNAPSHOT = re.compile(rf"(\d+) problems, (\d+) judged samples; α = ({NUMBER}(?:, {NUMBER})*)")


def start_sweep(store, low: str, high: str, alphas: str) -> Job:
    spec = validate_spec(SweepSpec, {"low": low, "high": high, "alphas": alphas, "n": 8, "max_tokens": 32,
                                     "problems": PROBLEMS})  # fmt: skip
    job = runner.create_job(store, spec)
    runner.start(store, job.id)
    return job


def stop(store, job: Job) -> None:
    if store.get(Job, job.id).status in ("queued", "running"):  # a failed test leaves no sweep running
        runner.cancel(store, job.id)


def judged(store, exp: str) -> int:
    with store.connect(read_only=True) as con:
        q = "SELECT count(*) FROM evaluations WHERE experiment_id = ? AND outcome <> 'sandbox_error'"
        return con.execute(q, [exp]).fetchone()[0]


def wait_for_rows(store, job: Job) -> None:
    deadline = time.monotonic() + 300
    while judged(store, job.experiment_id) == 0:
        assert store.get(Job, job.id).status in ("queued", "running"), store.get(Job, job.id).error
        assert time.monotonic() < deadline, "the sweep judged nothing in 5 minutes"
        time.sleep(0.2)


@contextlib.contextmanager
def paused(store, job: Job):
    """The sweep's processes stopped between two writes, so a reload sees it part-way whatever the
    machine's load (on a busy CI host a whole sweep could land during one page render)."""
    pgid = os.getpgid(store.get(Job, job.id).pid)
    while True:
        os.killpg(pgid, signal.SIGSTOP)
        try:
            duckdb.connect(str(store.path), read_only=True).close()  # no write lock held: safe to read
            break
        except duckdb.Error:
            os.killpg(pgid, signal.SIGCONT)
            time.sleep(0.02)
    try:
        yield
    finally:
        os.killpg(pgid, signal.SIGCONT)


def load(page, url: str, plots: int) -> dict:
    """Open a page, wait for its script to finish, and read its snapshot caption and charts."""
    page.goto(url)
    page.get_by_text("judged samples;").first.wait_for(timeout=120000)
    wait_plots(page, plots)
    page.wait_for_function(DONE, timeout=120000)
    assert page.locator("[data-testid='stException']").count() == 0, page.locator(
        "[data-testid='stException']"
    ).first.inner_text()
    problems, samples, alphas = SNAPSHOT.search(page.get_by_text("judged samples;").first.inner_text()).groups()
    return {"problems": int(problems), "samples": int(samples), "alphas": {a.strip() for a in alphas.split(",")},
            "charts": page.evaluate(CHARTS)}  # fmt: skip


def points(traces: list[dict]) -> tuple[set[str], int]:
    """α points and samples of a Frontier chart, from its hover data ([α, n, …] per point)."""
    rows = [r for t in traces if t["custom"] for r in t["custom"]]
    return {r[0] for r in rows}, sum(int(r[1]) for r in rows)


def frontier_reload(page, server: str, exp: str, tmp_path: Path) -> dict:
    seen = load(page, f"{server}/frontier?exp={exp}", 4)
    outcomes, scatter, solve, trend = seen["charts"]
    with page.expect_download() as download:  # the Frontier table, as the page offers it
        page.get_by_role("button", name="CSV", exact=True).first.click()
    table = list(csv.DictReader(rows_of(Path(download.value.path()).read_text())))  # its provenance atop, skipped
    shown = {
        "table": ({f"{float(r['alpha']):g}" for r in table}, sum(int(r["n_samples"]) for r in table)),
        "outcomes_vs_alpha": points([t for t in outcomes if t["custom"]][:1]),  # the class panels share their points
        "frontier_scatter": points(scatter),
        "solve_rate": points(solve),
    }
    for part, (alphas, samples) in shown.items():
        assert (alphas, samples) == (seen["alphas"], seen["samples"]), f"{part} differs from the caption at {seen}"
    # the trend's lines (one per failure class) carry no sample counts: their α points, once a slope exists
    trend_alphas = {f"{float(x):g}" for t in trend if not t["name"].endswith("band") and t["x"] for x in t["x"]}
    assert trend_alphas == seen["alphas"] if trend_alphas else len(seen["alphas"]) < 2, f"trend_bands at {seen}"
    return seen


def test_frontier_follows_a_running_sweep_then_passk_and_churn_follow_a_second(server, store, page, tmp_path,
                                                                               monkeypatch):  # fmt: skip
    monkeypatch.setenv("FLAB_CACHE", str(tmp_path / "cache"))
    build_builtin(store, only=[p.split("/")[1] for p in PROBLEMS], progress=False)
    low, high = (str(make_tiny_checkpoint(tmp_path / name, seed=s)) for name, s in (("low", 1), ("high", 2)))
    page.goto(f"{server}/frontier")  # a fresh server's first render (imports, caches) before the sweep starts,
    page.wait_for_function(DONE, timeout=120000)  # so the reloads below can follow the sweep, not trail it
    job = start_sweep(store, low, high, "0,0.5,1")
    try:
        wait_for_rows(store, job)
        with paused(store, job):
            seen = [frontier_reload(page, server, job.experiment_id, tmp_path)]
        while store.get(Job, job.id).status in ("queued", "running"):
            seen.append(frontier_reload(page, server, job.experiment_id, tmp_path))
        assert store.get(Job, job.id).status == "done", store.get(Job, job.id).error
        final = frontier_reload(page, server, job.experiment_id, tmp_path)
    finally:
        stop(store, job)
    assert final["alphas"] == {"0", "0.5", "1"} and final["samples"] == judged(store, job.experiment_id) == 48
    assert seen[0]["samples"] < final["samples"], "the first reload came after the sweep ended: nothing was followed"

    passk_and_churn(page, server, job.experiment_id)  # both pages' first render, before the second sweep starts
    second = start_sweep(store, low, high, "-0.5,0,1")
    try:
        wait_for_rows(store, second)
        with paused(store, second):
            first = passk_and_churn(page, server, second.experiment_id)
        while store.get(Job, second.id).status in ("queued", "running"):
            passk_and_churn(page, server, second.experiment_id)
        assert store.get(Job, second.id).status == "done", store.get(Job, second.id).error
        last = passk_and_churn(page, server, second.experiment_id)
    finally:
        stop(store, second)
    assert first["churn_samples"] < last["samples"] == judged(store, second.experiment_id) == 48
    assert last["alphas"] == {"-0.5", "0", "1"}


def passk_and_churn(page, server: str, exp: str) -> dict:
    """Churn's grid and pass@k's curves against each page's snapshot caption."""
    churn = load(page, f"{server}/churn?exp={exp}", 1)
    (grid,) = churn["charts"][0]
    columns = {x.removeprefix("α=") for x in grid["x"]}
    cells = sum(int(re.search(r": \d+/(\d+) correct", t).group(1)) for t in grid["text"])
    assert (columns, cells) == (churn["alphas"], churn["samples"]), churn
    passk = load(page, f"{server}/passk?exp={exp}", 0)  # a cell with no sample yet is left out of its curves
    assert (passk["alphas"], passk["samples"]) == (churn["alphas"], churn["samples"]) or passk["samples"] > churn[
        "samples"
    ]
    # the pass@k curves (a curve's hover data starts with its own name), not the gain curves (theirs: the baseline)
    lines = [t for chart in passk["charts"] for t in chart if t["custom"] and t["custom"][0][0] == t["name"]]
    singles = {  # the best single at each k is the gain table's, no checkpoint of its own
        t["name"].removeprefix("α=") for t in lines if not t["name"].startswith(("pool: ", "best single"))
    }
    assert singles <= passk["alphas"]
    interpolated = [a for a in passk["alphas"] if 0 <= float(a) <= 1]
    for t in lines:  # every curve over the caption's problems, less those a member has no sample of yet
        assert {0 < int(r[2]) <= passk["problems"] for r in t["custom"]} == {True}
        if t["name"].startswith("pool: all interpolated, "):
            assert {r[3] for r in t["custom"]} == {f" · {len(interpolated)} members"}
    return passk | {"churn_samples": churn["samples"]}  # churn loads first: the earlier snapshot of the two
