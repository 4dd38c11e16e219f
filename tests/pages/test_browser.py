"""The dashboard in a real browser: Playwright drives Debian's Chromium (never a downloaded one)."""

import json
import struct
from pathlib import Path
from urllib.parse import parse_qs, quote, urlparse

import pytest

from backend.lab.recipe import LAB_LABEL
from backend.records import Job
from tests.pages.browser import ARGS, CHROMIUM, LAB, shoot, wait_plots

pytestmark = pytest.mark.browser


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_dashboard_in_chromium(server, page, tmp_path, populated):
    page.goto(f"{server}/frontier?exp=exp-dash")
    wait_plots(page, 4)
    traces = page.evaluate("Array.from(document.querySelectorAll('.js-plotly-plot')).map(p => p.data.length)")
    # outcome classes (a band and a line each); each point's CI bars + merged + not merged + its distance to the
    # interpolation; CI band + line; trend bands + lines
    assert traces == [8, 6 + 3, 2, 4]

    page.get_by_role("button", name="Export: HTML · PNG · SVG · PDF").first.click()
    page.get_by_role("button", name="PNG", exact=True).first.wait_for(timeout=60000)
    with page.expect_download() as download:
        page.get_by_role("button", name="PNG", exact=True).first.click()
    # the outcome panels' own height (620 px: four panels), at 1000 px wide, twice for a sharp PNG
    assert png_size(Path(download.value.path()).read_bytes()) == (2000, 1240)
    with page.expect_download() as download:
        page.get_by_role("button", name="HTML").first.click()
    html_export = tmp_path / "figure.html"
    html_export.write_bytes(Path(download.value.path()).read_bytes())

    page.goto(f"{server}/churn?exp=exp-dash")
    wait_plots(page, 1)
    cell = page.locator(".js-plotly-plot .scatterlayer .point").first.bounding_box()
    page.mouse.click(cell["x"] + cell["width"] / 2, cell["y"] + cell["height"] / 2)
    page.wait_for_url("**/problem?**", timeout=30000)
    assert "problem=" in page.url
    page.get_by_text("Outcomes per checkpoint").wait_for(timeout=30000)

    page.goto(f"{server}/passk?exp=exp-dash")
    wait_plots(page, 1)


def test_every_frontier_chart_keeps_its_plot_area_in_a_narrow_window(server, page):
    """At a 1000 px window (a 540 px column) each chart's plot area, as Chromium lays it out, is at
    least half its width: the trend bands' legend on the right once took 370 px and left 91."""
    page.set_viewport_size({"width": 1000, "height": 1000})
    page.goto(f"{server}/frontier?exp=exp-dash")
    wait_plots(page, 4)
    sizes = page.evaluate(
        "Array.from(document.querySelectorAll('.js-plotly-plot'))"
        ".map(p => [p._fullLayout._size.w, p._fullLayout.width])"
    )
    assert len(sizes) == 4 and all(w >= 0.5 * width for w, width in sizes), sizes


def most_changed_problem(store, exp: str) -> str:
    """The problem whose share of correct samples differs most between α = 0 and α = 1."""
    from backend.analysis.frame import to_outcomes

    o = to_outcomes(store.outcome_counts(exp))
    rate = o.correct / o.n.clip(min=1)
    gap = abs(rate[:, o.alphas.index(0.0)] - rate[:, o.alphas.index(1.0)])
    return o.problems[int(gap.argmax())]


@pytest.mark.skipif(not (LAB / "recipe.json").is_file(), reason="no committed lab artifacts")
def test_miniature_lab_in_chromium(lab_server, store, page):
    """The docs' screenshots (README.md, docs/dashboard.md): every main page on the real lab content."""
    manifest = json.loads((LAB / "recipe.json").read_text())
    exp, run = manifest["sweep_experiment"], manifest["rl_experiments"][-1]
    page.goto(f"{lab_server}/frontier?exp={exp}")
    wait_plots(page, 4)
    traces = page.evaluate("Array.from(document.querySelectorAll('.js-plotly-plot')).map(p => p.data.length)")
    # outcome classes (a band and a line each); each point's CI bars (9 α and the SFT) + merged α points + the SFT +
    # its distance to the interpolation; CI band + line; trend
    assert traces == [8, 10 + 3, 2, 4]
    notes = page.evaluate(
        "(document.querySelectorAll('.js-plotly-plot')[0]._fullLayout.annotations || []).map(a => a.text)"
    )
    assert not [n for n in notes if exp in n]  # the sweep is named once, in the title, not again over the panel
    scatter = page.evaluate("""() => {
        const gd = document.querySelectorAll('.js-plotly-plot')[1];
        const box = (sel) => { const r = gd.querySelector(sel).getBoundingClientRect();
                               return [r.left, r.top, r.right, r.bottom]; };
        return {x: gd._fullLayout.xaxis.range, y: gd._fullLayout.yaxis.range,
                xpx: gd._fullLayout.xaxis._length, ypx: gd._fullLayout.yaxis._length,
                xs: gd._fullData.flatMap(t => Array.from(t.x)), ys: gd._fullData.flatMap(t => Array.from(t.y)),
                // each point's 95 % CI ends, from its error bars (the recovery line to the curve has none)
                xci: gd._fullData.filter(t => t.error_x.visible).flatMap(t => Array.from(t.x).flatMap((v, i) =>
                    [v - t.error_x.arrayminus[i], v + t.error_x.array[i]])),
                yci: gd._fullData.filter(t => t.error_y.visible).flatMap(t => Array.from(t.y).flatMap((v, i) =>
                    [v - t.error_y.arrayminus[i], v + t.error_y.array[i]])),
                legend: box('.legend'), colorbar: box('.colorbar'),
                labels: gd._fullLayout.annotations.length};
    }""")
    for axis, values, cis in (("x", scatter["xs"], scatter["xci"]), ("y", scatter["ys"], scatter["yci"])):
        lo, hi = scatter[axis]
        assert 0 <= lo <= min(values) and max(values) <= hi <= 1  # every point on the plot, inside 0–100 %
        ci_lo, ci_hi = max(0, min(cis)), min(1, max(cis))
        assert lo <= ci_lo + 1e-9 and ci_hi - 1e-9 <= hi  # and every CI end
        assert hi - lo <= 1.3 * (ci_hi - ci_lo) + 0.01  # fitted to the data and its CIs (12 % margins), not 0–100 %
    (l1, t1, r1, b1), (l2, t2, r2, b2) = scatter["legend"], scatter["colorbar"]
    assert r1 <= l2 or r2 <= l1 or b1 <= t2 or b2 <= t1  # the legend clears the colour bar
    assert scatter["labels"] == 10  # every point labelled: 9 α and the SFT (test_scatter_labels.py: no collisions)
    label = LAB_LABEL[0].upper() + LAB_LABEL[1:]  # the note's first words: what the sweep is
    assert label in page.locator("section[data-testid='stSidebar']").inner_text()
    shoot(page, "frontier.png")
    page.goto(f"{lab_server}/churn?exp={exp}")
    wait_plots(page, 1)
    shoot(page, "churn.png")
    cell = page.locator(".js-plotly-plot .scatterlayer .point").first.bounding_box()
    page.mouse.click(cell["x"] + cell["width"] / 2, cell["y"] + cell["height"] / 2)
    page.wait_for_url("**/problem?**", timeout=30000)
    page.get_by_text("Outcomes per checkpoint").wait_for(timeout=30000)
    shoot(page, "problem.png")
    assert parse_qs(urlparse(page.url).query)["problem"][0]  # the clicked cell's problem
    problem = most_changed_problem(store, exp)  # the samples view where α = 0 and α = 1 differ most
    page.goto(f"{lab_server}/problem?exp={exp}&problem={quote(problem)}&alpha=0&vs=1")
    heading = page.get_by_text("Samples compared across α")
    heading.wait_for(timeout=60000)
    main = page.locator("[data-testid='stMain']")
    main.get_by_text("first failing test").or_(main.get_by_text("passed all")).first.wait_for(timeout=60000)
    sides = [page.get_by_role("combobox", name=n).first.input_value() for n in ("α", "compared with α")]
    assert sides == ["α = 0", "α = 1"]  # the endpoints side by side
    heading.scroll_into_view_if_needed()
    page.wait_for_timeout(800)
    shoot(page, "samples.png")
    page.goto(f"{lab_server}/passk?exp={exp}")
    wait_plots(page, 1)
    shoot(page, "passk.png")
    page.goto(f"{lab_server}/training?run={run}")
    wait_plots(page, 4)
    shoot(page, "training.png")
    page.goto(lab_server)
    page.get_by_text("Miniature lab: how its programs change along α").wait_for(timeout=60000)
    page.wait_for_timeout(800)
    shoot(page, "overview.png", full_page=True)


def test_exported_html_opens_offline(tmp_path, page):
    import polars as pl

    from dashboard.exports import figure_bytes
    from dashboard.plots import outcome_fractions

    table = pl.DataFrame(
        {
            "alpha": [0.0, 1.0],
            **{c: [0.25, 0.25] for c in ("correct", "optimization_failure", "correctness_failure", "format_failure")},
        }
    )
    path = tmp_path / "fig.html"
    path.write_bytes(figure_bytes(outcome_fractions(table), "html"))
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri())
    page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length == 1", timeout=30000)
    assert [u for u in requests if not u.startswith("file://")] == []
    assert page.evaluate("document.querySelector('.js-plotly-plot').data.length") == 4  # the four outcome classes drawn


def test_sweep_from_the_form_reaches_done(server, page, populated, tmp_path):
    from backend.lab.tiny import make_tiny_checkpoint
    from backend.problems.build import build_builtin

    build_builtin(populated, only=["count-pairs-sum"], progress=False)
    low, high = make_tiny_checkpoint(tmp_path / "low", seed=1), make_tiny_checkpoint(tmp_path / "high", seed=2)
    page.goto(f"{server}/launch")
    page.get_by_role("button", name="Launch sweep").wait_for(timeout=180000)  # the machine may be busy

    def field(name):
        return page.get_by_role("textbox", name=name).first

    def number(name):
        return page.get_by_role("spinbutton", name=name).first

    field("θ_low (α = 0): path").fill(str(low))
    field("θ_high (α = 1): path").fill(str(high))
    field("α grid").fill("0,1")
    benchmark = page.get_by_role("combobox", name="Benchmark").first  # a choice among the stored sets
    assert benchmark.input_value() == "builtin (1 problem)"  # unmeasured endpoints: the spec's default set
    for name, value in (("At most N problems (0 = all)", "1"), ("Samples per problem", "2"), ("Max tokens", "16")):
        number(name).fill(value)
        number(name).press("Tab")
    page.get_by_role("button", name="Launch sweep").click()
    page.get_by_text("started (experiment").wait_for(timeout=60000)
    follow = page.get_by_role("link", name="Follow job").get_attribute("href")  # the next rerun draws it no more
    # a relaunch is the same size: editing the grid after the launch keeps every field, the limit too
    # (the launched sweep now measures these endpoints; its recipe once redrew the fields, the limit at "all")
    field("α grid").fill("0, 0, 3")
    field("α grid").press("Tab")
    page.get_by_text("α = 3 is beyond |α| ≤ 2").wait_for(timeout=60000)  # accepted, with a word
    page.get_by_text("α = 0 is written more than once").wait_for(timeout=60000)  # "0,0" is one point, said
    for name, value in (("At most N problems (0 = all)", "1"), ("Samples per problem", "2"), ("Max tokens", "16")):
        assert number(name).input_value() == value, name
    page.get_by_text("This launch samples 2 checkpoints × 1 problem × 2 samples per problem").wait_for(timeout=60000)
    page.goto(server + "/" + follow.lstrip("/").removeprefix(server.rstrip("/") + "/"))
    page.wait_for_url("**/jobs**")
    page.get_by_text("`done`", exact=False).or_(page.locator("code", has_text="done")).first.wait_for(timeout=180000)
    shoot(page, "jobs.png")
    assert [j.status for j in populated.select(Job)] == ["done"]


def shell_of(page) -> dict:
    """What a newcomer sees of the app around the page: its navigation and its width."""
    page.get_by_text("frontier-lab").first.wait_for(timeout=60000)
    sidebar = page.locator("section[data-testid='stSidebar']")
    try:  # the links arrive after the heading; a page drawn without the app never gets them
        sidebar.get_by_role("link", name="Jobs").wait_for(timeout=20000)
    except Exception:
        pass
    return page.evaluate("""() => ({
        nav: document.querySelector("section[data-testid='stSidebar']")?.innerText || "",
        width: document.querySelector("[data-testid='stMainBlockContainer']").getBoundingClientRect().width})""")


def test_deep_links_work_cold(cold_server):
    """A fresh server, a fresh browser, a deep link first; then new browsers with other deep links;
    then a deep link after `/`: every time the app's navigation and its wide layout."""
    from playwright.sync_api import sync_playwright

    links = ["/frontier?exp=exp-dash&difficulty=easy", "/churn?exp=exp-dash", "/passk?exp=exp-dash", "/", "/jobs"]
    for link in links:
        with sync_playwright() as p:  # a fresh browser each time
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(cold_server + link)
            shell = shell_of(page)
            browser.close()
        assert "Overview" in shell["nav"] and "Jobs" in shell["nav"], (link, shell["nav"][:200])
        assert shell["width"] > 900, (link, shell["width"])  # layout="wide", not the narrow default


def test_pages_stay_offline_and_links_look_like_links(server, page):
    """No page asks another host for anything (an offline cluster has none), and a link in a page
    body is drawn as a link: underlined, in the link colour, unlike the text around it."""
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    for link in ("/", "/frontier?exp=exp-dash", "/churn?exp=exp-dash", "/passk?exp=exp-dash", "/launch", "/jobs"):
        page.goto(server + link)
        page.get_by_text("frontier-lab").first.wait_for(timeout=60000)
        page.wait_for_timeout(1500)  # icons, fonts and the favicon load after the first paint
    foreign = [u for u in requests if not u.startswith((server, "data:", "blob:"))]
    assert foreign == []
    page.goto(server)
    link = page.get_by_role("link", name="Open its frontier")
    link.wait_for(timeout=60000)
    style = link.evaluate("""a => { const t = a.querySelector('p, span') || a; const s = getComputedStyle(t);
        const body = getComputedStyle(document.querySelector('[data-testid="stMain"] p'));
        return {line: s.textDecorationLine, color: s.color, body: body.color}; }""")
    assert style["line"] == "underline" and style["color"] != style["body"], style


# serial (make test runs it alone): beside a parallel worker's load it read the form's messages
# before Streamlit drew them (passes alone; failed once in the two-phase suite)
@pytest.mark.serial
def test_form_messages_in_chromium(server, page, populated, tmp_path):
    """Each mistake a user can make in the Launch forms gets one line, in the form's words."""
    from backend.lab.tiny import make_tiny_checkpoint

    low = make_tiny_checkpoint(tmp_path / "low", seed=1)
    page.goto(f"{server}/launch")
    page.get_by_role("button", name="Launch sweep").wait_for(timeout=60000)

    def launch(button: str, expected: list[str]) -> list[str]:
        """Click, then read the error lines once the rerun has replaced the previous click's: under
        load the old alert stays on screen for a while after the click, so wait for new text."""
        page.get_by_role("button", name=button).click()
        alerts = page.locator("[data-testid='stAlertContentError']")
        texts: list[str] = []
        for _ in range(150):
            texts = [t.strip() for t in alerts.all_inner_texts()]
            if texts == expected:
                break
            page.wait_for_timeout(200)
        return texts

    def fill(name: str, value: str) -> None:
        box = page.get_by_role("textbox", name=name).first
        box.fill(value)
        box.press("Tab")

    expected = ["choose both endpoints, θ_low and θ_high"]
    assert launch("Launch sweep", expected) == expected
    fill("θ_low (α = 0): path", str(low))
    fill("θ_high (α = 1): path", f"{low}/")  # the same folder, spelled with a trailing slash
    expected = ["θ_low and θ_high are the same checkpoint (identical content); choose two different ones"]
    assert launch("Launch sweep", expected) == expected
    high = make_tiny_checkpoint(tmp_path / "high", seed=2)
    fill("θ_high (α = 1): path", str(high))
    fill("α grid", "2:-1:0.5")
    expected = ["α range '2:-1:0.5' is reversed; write -1:2:0.5"]
    assert launch("Launch sweep", expected) == expected

    page.get_by_role("tab", name="Eval checkpoints").click()
    expected = ["Checkpoint folders: give at least one"]
    assert launch("Launch eval", expected) == expected
    page.get_by_role("textbox", name="Checkpoint folders, one per line").fill(str(low))
    samples = page.get_by_role("spinbutton", name="Samples per problem").first  # the visible tab's: the eval form
    samples.fill("0")
    samples.press("Tab")
    expected = ["Samples per problem: at least 1"]
    assert launch("Launch eval", expected) == expected
    assert populated.count(Job) == 0
