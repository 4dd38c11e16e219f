"""The dashboard as a research instrument, in Chromium: one view state across pages, samples
compared across α, experiments overlaid, fitted scatter axes (issue #27)."""

import re
from dataclasses import replace
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import expect

from backend.records import Evaluation, Sample, TestResult
from tests.pages.browser import rows_of, serve, shoot, wait_plots

pytestmark = pytest.mark.browser


@pytest.fixture
def overlay_server(two_experiments, db_path, tmp_path):
    yield from serve(db_path, tmp_path)


def query(page) -> dict[str, str]:
    """The page's URL parameters as the page itself holds them (Streamlit rewrites the URL in the page
    with the History API, which page.url can report a moment late on a busy machine)."""
    return {k: v[0] for k, v in parse_qs(urlparse(page.evaluate("location.href")).query).items()}


def chosen(page, label: str) -> str:
    """What a select box shows as chosen (Streamlit 1.67 keeps it in its combobox input)."""
    box = page.get_by_role("combobox", name=label).first
    box.wait_for(timeout=60000)
    return box.input_value()


def shows(page, label: str, text: str, exact: bool = False) -> None:
    """Wait until the select box shows `text` (or a value holding it) as chosen: on a busy machine
    a page may still be rerunning with its previous value when its heading appears (fails after 60 s)."""
    value = text if exact else re.compile(re.escape(text))
    expect(page.get_by_role("combobox", name=label).first).to_have_value(value, timeout=60000)


def wait_query(page, wanted: dict[str, str]) -> None:
    """Wait until the URL holds every wanted parameter: the page writes them one rerun at a time."""
    page.wait_for_function(
        "(w) => Object.entries(w).every(([k, v]) => new URLSearchParams(location.search).get(k) === v)",
        arg=wanted, timeout=30000,
    )  # fmt: skip


def test_view_state_kept_across_every_page(overlay_server, page):
    """A view chosen on one page (the second experiment, hard problems, solved at 70 %, pooled
    averaging) is what every other page opens with, in its widgets and in its URL; a copied URL
    restores it in a new browser session."""
    page.goto(f"{overlay_server}/frontier?exp=exp-dash-b&difficulty=hard&solved=0.7&avg=per_sample")
    wait_plots(page, 3)
    wanted = {"exp": "exp-dash-b", "difficulty": "hard", "solved": "0.7", "avg": "per_sample"}
    sidebar = page.locator("section[data-testid='stSidebar']")
    # each page's own title: until it shows, the page before it (and its URL) may still be on screen
    titles = {"Churn": "Per-problem churn", "pass@k": "pass@k and ensembles", "Problem": "Problem",
              "Overview": "frontier-lab", "Launch": "Launch", "Jobs": "Jobs", "Training": "Training curves",
              "Frontier": "Frontier"}  # fmt: skip
    for name, title in titles.items():
        sidebar.get_by_role("link", name=name).click()
        page.get_by_role("heading", level=1, name=title, exact=True).wait_for(timeout=60000)
        wait_query(page, wanted)
        assert {k: query(page).get(k) for k in wanted} == wanted, name
        if name in ("Churn", "pass@k", "Problem", "Frontier"):
            shows(page, "Experiment", "second sweep")
    # the Frontier page drew the pooled averaging and the hard filter it was left with
    expect(page.get_by_role("radio", name="pooled over samples")).to_be_checked(timeout=60000)
    shows(page, "Difficulty", "hard", exact=True)

    link = page.evaluate("location.href")
    context = page.context.browser.new_context(viewport={"width": 1400, "height": 1000})  # nothing but the link
    other = context.new_page()
    other.goto(link)
    wait_plots(other, 3)
    shows(other, "Experiment", "second sweep")
    expect(other.get_by_role("radio", name="pooled over samples")).to_be_checked(timeout=60000)
    shows(other, "Difficulty", "hard", exact=True)
    context.close()


def add_compared_samples(store) -> None:
    """Problem t/p0, sample 0 at α = 0.5 and α = 1: two different programs; the one at α = 0.5
    passes its short tests, times out on the test with the 50-character input and never runs the
    longest. Test results are stored in judging order's indices, not sorted."""
    store.put([
        Sample(experiment_id="exp-dash", checkpoint_id="m0.5", problem_id="t/p0", sample_idx=0, setting="reasoning",
               completion="I loop.\n```python\nwhile True:\n    pass\n```", code="while True:\n    pass\n"),
        Sample(experiment_id="exp-dash", checkpoint_id="m1", problem_id="t/p0", sample_idx=0, setting="reasoning",
               completion="```python\nprint(input())\n```", code="print(input())\n"),
    ])  # fmt: skip
    ladder = [
        TestResult(2, 900, 3, None),
        TestResult(0, 3, 1, "AC", cpu_s=0.01, wall_s=0.01, mem_mb=9.0),
        TestResult(1, 50, 2, "TLE", cpu_s=2.104, wall_s=6.2, mem_mb=9.0,
                   detail="Traceback (most recent call last):\n  File \"main.py\", line 1\nKeyboardInterrupt"),
    ]  # fmt: skip
    store.put([
        Evaluation(experiment_id="exp-dash", checkpoint_id="m0.5", problem_id="t/p0", sample_idx=0,
                   outcome="optimization_failure", verdict="TLE", test_results=ladder),
        Evaluation(experiment_id="exp-dash", checkpoint_id="m1", problem_id="t/p0", sample_idx=0, outcome="correct",
                   verdict="AC", test_results=[replace(t, verdict="AC", cpu_s=0.01) for t in ladder]),
    ])  # fmt: skip


@pytest.fixture
def samples_server(populated, db_path, tmp_path):
    add_compared_samples(populated)
    yield from serve(db_path, tmp_path)


def click_cell(page, column: str, row: str) -> None:
    """Click the churn grid's cell of checkpoint label `column` and problem `row`."""
    x, y = page.evaluate(
        """([column, row]) => { const gd = document.querySelector('.js-plotly-plot');
        const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, box = gd.getBoundingClientRect();
        return [box.left + xa._offset + xa.d2p(column), box.top + ya._offset + ya.d2p(row)]; }""",
        [column, row],
    )
    page.mouse.click(x, y)


def test_churn_click_opens_the_samples_view_at_the_clicked_alpha(samples_server, page):
    page.goto(f"{samples_server}/churn?exp=exp-dash")
    wait_plots(page, 1)
    click_cell(page, "m0.5", "t/p0")
    page.wait_for_url("**/problem?**", timeout=30000)
    page.get_by_text("Samples compared across α").wait_for(timeout=60000)
    page.get_by_text("first failing test").first.wait_for(timeout=30000)
    assert query(page)["alpha"] == "0.5" and query(page)["problem"] == "t/p0"
    main = page.locator("[data-testid='stMain']")
    assert chosen(page, "α") == "α = 0.5"  # left side: the α clicked
    assert chosen(page, "compared with α") == "α = 1"  # right side: the other endpoint

    text = main.inner_text()
    # the first failing test in ascending input length, with its tier, length, verdict and CPU time
    assert "first failing test: #1 (tier 2, input length 50) — TLE, CPU 2.104 s of 2 s" in text
    assert "passed all 3 tests" in text  # the right side
    main.get_by_text("@@").first.wait_for(timeout=30000)  # the diff, drawn last
    codes = main.locator("[data-testid='stCode']").all_inner_texts()
    assert any("while True:" in c for c in codes) and any("print(input())" in c for c in codes), codes
    diff = next(c for c in codes if "@@" in c)
    assert "-while True:" in diff and "+print(input())" in diff
    assert "```" not in text  # the raw completion is not repeated with its fences
    # the ladder: ascending input length, the unrun test marked as such, never "None"
    grid = main.locator("[data-testid='stDataFrame']:visible").first
    # the grid draws its frame first and fills its cells later (on a busy machine, after this line)
    grid.locator("[role='gridcell']").last.wait_for(state="attached", timeout=30000)
    cells = grid.locator("[role='gridcell']").all_inner_texts()
    assert "not run" in cells and "None" not in cells, cells
    lengths = [int(c) for c in cells[2::6]]  # columns: test, tier, input length, verdict, CPU s, memory MB
    assert lengths == [3, 50, 900]
    main.get_by_text("Failure detail").click()
    main.get_by_text("KeyboardInterrupt").wait_for(timeout=10000)


def test_two_experiments_overlaid(overlay_server, page):
    page.goto(f"{overlay_server}/frontier?exp=exp-dash&with=exp-dash-b")
    wait_plots(page, 3)
    figures = page.evaluate("""() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(gd => ({
        names: gd._fullData.map(t => t.name), colors: gd._fullData.map(t => t.marker && t.marker.color),
        titles: (gd._fullLayout.annotations || []).map(a => a.text)}))""")
    mix, scatter, rate = figures
    assert len(mix["names"]) == 16  # per experiment, four outcome classes (a panel each), each a line and its band
    assert {n for n in mix["names"] if "CI" not in n} == {
        "dashboard test sweep (exp-dash)",
        "second sweep (exp-dash-b)",
    }
    assert mix["titles"][:4] == ["correct", "optimization failure", "correctness failure", "format failure"]
    merged = [i for i, n in enumerate(scatter["names"]) if not n.endswith(("not merged", "95% CI"))]
    assert [scatter["names"][i].split(" (")[0] for i in merged] == ["dashboard test sweep", "second sweep"]
    assert len({scatter["colors"][i] for i in merged}) == 2  # each experiment its own colour
    assert [n for n in rate["names"] if "CI" not in n] == [
        "dashboard test sweep (exp-dash)",
        "second sweep (exp-dash-b)",
    ]
    page.locator(".js-plotly-plot").nth(1).scroll_into_view_if_needed()
    page.wait_for_timeout(800)
    shoot(page, "overlay.png")  # the test suite's two synthetic sweeps (the lab has one sweep)


def test_scatter_axes_inside_the_unit_square_and_fitted(server, page):
    page.goto(f"{server}/frontier?exp=exp-dash")
    wait_plots(page, 3)
    s = page.evaluate("""() => { const gd = document.querySelectorAll('.js-plotly-plot')[1];
        const ends = (t, axis) => { const e = t['error_' + axis] || {}; const v = Array.from(t[axis]);
            return e.visible ? v.flatMap((p, i) => [p - e.arrayminus[i], p + e.array[i]]) : []; };
        return {x: gd._fullLayout.xaxis.range, y: gd._fullLayout.yaxis.range,
                xs: gd._fullData.flatMap(t => Array.from(t.x)), ys: gd._fullData.flatMap(t => Array.from(t.y)),
                xe: gd._fullData.flatMap(t => ends(t, 'x')), ye: gd._fullData.flatMap(t => ends(t, 'y'))}; }""")
    assert s["xe"] and s["ye"]  # CI error bars drawn
    for axis, points, ends in (("x", s["xs"], s["xe"]), ("y", s["ys"], s["ye"])):
        lo, hi = s[axis]
        assert lo >= 0 and hi <= 1, (axis, lo, hi)
        assert lo <= min(points + ends) + 1e-9 and max(points + ends) <= hi + 1e-9  # points and CIs on the plot
        extent = max(points + ends) - min(points + ends)
        assert hi - lo <= extent * 1.3 + 0.01, (axis, lo, hi, extent)  # fitted: a margin, not 0–100 %


def test_zip_holds_each_figures_data_as_csv_and_samples_download_as_jsonl(server, page, tmp_path):
    import csv
    import json
    import zipfile
    from pathlib import Path

    page.goto(f"{server}/frontier?exp=exp-dash&difficulty=hard")
    wait_plots(page, 3)
    page.get_by_role("button", name="Export all figures of this experiment (zip)").click()
    button = page.get_by_role("button", name="Download the zip")
    button.wait_for(timeout=300000)
    with page.expect_download() as download:
        button.click()
    z = zipfile.ZipFile(Path(download.value.path()))
    names = set(z.namelist())
    figures = ("outcomes_vs_alpha", "frontier_scatter", "solve_rate", "churn_heatmap", "passk_curves")
    assert {f"{f}.csv" for f in figures} <= names and {f"{f}.png" for f in figures} <= names
    frontier = list(csv.DictReader(rows_of(z.read("frontier_scatter.csv"))))
    # the hard problems (t/p1, t/p3, t/p5) × 6 samples for each of the 6 checkpoints
    assert sorted(r["label"] for r in frontier) == ["m-0.5", "m0", "m0.5", "m1", "m1.5", "r3"]
    assert {r["n_samples"] for r in frontier} == {"18"}
    churn = list(csv.DictReader(rows_of(z.read("churn_heatmap.csv"))))
    assert len(churn) == 18 and {r["problem_id"] for r in churn} == {"t/p1", "t/p3", "t/p5"}
    assert "dashboard test sweep (exp-dash)" in z.read("solve_rate.html").decode()  # labelled with its experiment

    page.get_by_role("button", name="Raw samples of this view (JSONL)").click()
    button = page.get_by_role("button", name="Download 108 samples")  # 3 problems × 6 checkpoints × 6 samples
    button.wait_for(timeout=60000)
    with page.expect_download() as download:
        button.click()
    rows = [json.loads(line) for line in Path(download.value.path()).read_text().splitlines()]
    assert len(rows) == 108 and {r["problem_id"] for r in rows} == {"t/p1", "t/p3", "t/p5"}
    assert all(r["evaluation"]["outcome"] in ("correct", "optimization_failure", "correctness_failure",
                                              "format_failure") for r in rows)  # fmt: skip
