"""Contest windows, the checkpoint table and the one-file report on the committed lab, with contest
dates set on half of its problems (issue 68): the CLI and the dashboard count the same problems, the
CSV names the window, the URL holds it, an empty window is one line; `analyze checkpoints` has one
row per checkpoint with its tier; the report, from the CLI and from the Overview's button, opens in
Chromium with the network blocked and prints as a PDF."""

import csv
import dataclasses
import io
import json
import re
from pathlib import Path

import pytest

from backend.records import Evaluation, Problem
from tests.conftest import run_cli
from tests.pages.browser import LAB, rows_of, serve, shoot, wait_plots
from tests.pages.test_figures_reviewed import downloaded

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not (LAB / "recipe.json").is_file(), reason="no committed lab artifacts"),
]
SINCE, UNTIL = "2024-01-01", "2024-06-30"


def date_half_the_problems(store, exp: str) -> list[str]:
    """Every second problem the sweep judged (in id order) gets a contest date inside SINCE…UNTIL,
    the last of them on UNTIL itself (a window's ends are in it); the others keep none."""
    judged = sorted({e.problem_id for e in store.select(Evaluation, {"experiment_id": exp})})
    dated = judged[::2]
    days = [f"2024-0{1 + i % 6}-{10 + i % 18:02d}T00:00:00" for i in range(len(dated) - 1)] + ["2024-06-30"]
    store.put([dataclasses.replace(store.get(Problem, p), contest_date=d) for p, d in zip(dated, days, strict=True)])
    return dated


def report_in_chromium(browser, path: Path) -> dict:
    """The report opened from its file in a fresh context with every request outside the file
    refused: what it asked for, what it drew, and its PDF print."""
    asked = []
    context = browser.new_context(viewport={"width": 1100, "height": 1400})
    page = context.new_page()

    def route(r):
        if r.request.url.startswith("file://"):
            return r.continue_()
        asked.append(r.request.url)
        return r.abort()

    page.route("**/*", route)
    page.goto(path.as_uri(), timeout=240000)  # 5 MB of script parsed and seven figures drawn, on a busy machine
    page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length >= 7", timeout=120000)
    drawn = page.evaluate("""() => ({
        plots: Array.from(document.querySelectorAll('.js-plotly-plot')).map(p => p.id),
        rows: document.querySelectorAll('#checkpoints tbody tr').length,
        findings: document.querySelectorAll('ul li').length,
        scripts: Array.from(document.scripts).filter(s => s.src).length})""")
    shoot(page, "report.png")
    pdf = page.pdf(format="A4", print_background=True)
    context.close()
    return drawn | {"asked": asked, "pdf": pdf}


def test_a_window_counts_the_same_problems_everywhere_and_the_report_opens_offline(store, db_path, tmp_path, page):
    from backend.lab.artifacts import import_results

    import_results(store)
    exp = json.loads((LAB / "recipe.json").read_text())["sweep_experiment"]
    dated = date_half_the_problems(store, exp)
    window = ["--since", SINCE, "--until", UNTIL]

    done = run_cli("analyze", "frontier", "--experiment", exp, *window, "--csv", "--db", str(db_path))
    assert done.returncode == 0, done.stderr
    cli = {r["label"]: r for r in csv.DictReader(io.StringIO(done.stdout))}
    assert {r["n_problems"] for r in cli.values()} == {str(len(dated))} == {"20"}  # exactly the dated half
    assert f"{40 - len(dated)} problems have no contest date and are left out of this window" in done.stderr
    assert f"# contest window: contest dates {SINCE} … {UNTIL}, both included" in done.stderr
    empty = run_cli("analyze", "frontier", "--experiment", exp, "--window", "v6", "--db", str(db_path))
    assert empty.returncode == 2 and empty.stderr.splitlines()[-1].startswith(
        "error: no judged problem of this experiment has a contest date in 2025-02-01 … 2025-04-30"
    )

    done = run_cli("analyze", "checkpoints", "--experiment", exp, "--json", "--db", str(db_path))
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert len(rows) == 10 == len({r["checkpoint_id"] for r in rows})  # 9 α and the SFT, one row each
    assert all(r["pass_at_1_lo"] <= r["pass_at_1"] <= r["pass_at_1_hi"] and r["tier"] >= 1 for r in rows)
    assert min(r["tier"] for r in rows) == 1
    report = tmp_path / "lab-report.html"
    done = run_cli("report", "--experiment", exp, "--out", str(report), "--db", str(db_path))
    assert done.returncode == 0, done.stderr
    shown = report_in_chromium(page.context.browser, report)
    assert shown["asked"] == [] and shown["scripts"] == 0  # plotly.js inlined, nothing fetched
    assert len(shown["plots"]) == 7 and {"frontier_scatter", "churn_heatmap", "passk_curves"} <= set(shown["plots"])
    assert shown["rows"] == 10 and shown["findings"] == 4
    assert shown["pdf"][:5] == b"%PDF-" and len(re.findall(rb"/Type\s*/Page\b", shown["pdf"])) >= 3

    server = serve(db_path, tmp_path, warm=False)  # this test's own browser is the first
    url = next(server)
    try:
        page.goto(f"{url}/frontier?exp={exp}&since={SINCE}&until={UNTIL}")
        wait_plots(page, 4, timeout=300000)  # a cold server's first page, the lab's analysis included
        page.get_by_text("20 problems have no contest date").first.wait_for(timeout=60000)
        table = downloaded(page, "CSV").decode()
        assert f"# contest window: contest dates {SINCE} … {UNTIL}, both included" in table
        for r in csv.DictReader(rows_of(table)):  # the dashboard's numbers are the CLI's
            assert r["n_problems"] == "20"
            assert float(r["solve_rate"]) == pytest.approx(float(cli[r["label"]]["solve_rate"]))
        sidebar = page.locator("section[data-testid='stSidebar']")
        box = sidebar.get_by_role("combobox", name="Contest window").first
        box.click()
        box.fill("LiveCodeBench v6")  # the list is long: typing filters it, as a user would
        page.get_by_role("option").filter(has_text="LiveCodeBench v6 (2025-02-01").first.click()
        line = page.get_by_text("no judged problem of this experiment has a contest date in 2025-02-01 … 2025-04-30")
        line.wait_for(timeout=60000)  # one line, not empty charts
        page.wait_for_function("new URLSearchParams(location.search).get('window') === 'v6'", timeout=30000)
        assert page.locator(".js-plotly-plot").count() == 0

        page.goto(f"{url}/checkpoints?exp={exp}&k=4")
        page.get_by_role("heading", name="Checkpoints").wait_for(timeout=60000)
        grid = page.locator("[data-testid='stDataFrame']").first
        grid.wait_for(timeout=60000)
        assert page.get_by_role("spinbutton", name="k of pass@k").input_value() == "4"
        latex = downloaded(page, "LaTeX (booktabs)").decode()
        assert r"\toprule" in latex and latex.count(r" \\") == 11  # the header and 10 checkpoints
        assert latex.startswith("% experiment: miniature lab")

        page.goto(f"{url}/?exp={exp}")
        prepare = page.get_by_role("button", name="Report of this experiment (one HTML file, opens offline)")
        prepare.wait_for(timeout=300000)  # below the findings, which the Overview computes first
        prepare.click()
        button = page.get_by_role("button", name=re.compile(r"^Download the report"))
        button.wait_for(timeout=300000)
        with page.expect_download(timeout=120000) as download:
            button.click()
        from_overview = tmp_path / "overview-report.html"
        from_overview.write_bytes(Path(download.value.path()).read_bytes())
        assert report_in_chromium(page.context.browser, from_overview)["asked"] == []
    finally:
        next(server, None)
