"""What a page's first render leaves out or starts early (docs/benchmarks.md): the Frontier's
tables below its charts are computed only once opened, the browser loads plotly.js before any
chart arrives, and the Overview opens chart-free and loads plotly.js only once it is drawn."""

import json
import re

import pytest

from backend.records import Evaluation
from backend.store import Store
from tests.pages.browser import wait_plots
from tests.pages.test_apptest import app

SECTIONS = {"open-tiers": "first failing tier", "open-trend": "trend", "open-format": "Format failures"}


def test_the_frontiers_closed_sections_run_no_query_until_opened(populated, db_path, monkeypatch):
    """Closed, the tier and format-cause sections query nothing and draw no table; opened, the tier
    table holds each checkpoint's optimization failures by first failing tier, counted here from the
    stored evaluations."""
    evals = populated.select(Evaluation)
    for i, e in enumerate(evals):  # first failing tiers 1-6 on the optimization failures, none elsewhere
        e.first_failing_tier = (i % 6) + 1 if e.outcome == "optimization_failure" else None
    populated.put(evals)
    queried = []
    for name in ("optimization_tiers", "format_causes"):
        real = getattr(Store, name)
        monkeypatch.setattr(
            Store, name, lambda self, *a, _real=real, _name=name, **k: queried.append(_name) or _real(self, *a, **k)
        )
    at = app(db_path, monkeypatch, "frontier", {"exp": "exp-dash"})
    assert not at.exception, at.exception
    labels = [e.label for e in at.expander]
    assert all(any(words in label for label in labels) for words in SECTIONS.values()), labels
    assert not any(at.session_state[key] for key in SECTIONS)  # each starts closed
    assert queried == [] and len(at.dataframe) == 1  # the Frontier table alone

    at.session_state["open-tiers"] = True
    at.run()
    assert not at.exception, at.exception
    assert queried == ["optimization_tiers"]
    tiers = next(d.value for d in at.dataframe if "tier 1" in d.value.columns).set_index("label")
    assert sorted(tiers.index) == sorted({e.checkpoint_id for e in evals})  # the fixture labels each by its id
    for checkpoint in tiers.index:
        mine = [e for e in evals if e.checkpoint_id == checkpoint]
        assert tiers.loc[checkpoint, "n"] == len(mine) == 36
        for k in range(1, 7):
            failed = sum(e.outcome == "optimization_failure" and e.first_failing_tier == k for e in mine)
            assert tiers.loc[checkpoint, f"tier {k}"] == pytest.approx(failed / 36), (checkpoint, k)


@pytest.mark.browser
def test_the_browser_loads_plotly_before_any_chart_arrives(server, page):
    """The Launch page draws no chart, yet its first render fetches and runs Streamlit's Plotly
    chunk, without an error in the page: a chart page's first chart then finds it loaded."""
    chunk = re.compile(r"/static/js/PlotlyChart\.[\w-]+\.js$")
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    with page.expect_response(lambda r: chunk.search(r.url) is not None, timeout=60000) as response:
        page.goto(f"{server}/launch")
    assert response.value.status == 200
    page.get_by_role("button", name="Launch sweep").wait_for(timeout=60000)
    assert page.locator(".js-plotly-plot").count() == 0 and errors == []


# in the page's clock: when the script first reported it had ended (Streamlit's data-test-script-state)
SCRIPT_ENDED = """new MutationObserver((_, observer) => {
  const app = document.querySelector('.stApp');
  if (app && app.getAttribute('data-test-script-state') === 'notRunning' && !window.scriptEndedAt) {
    window.scriptEndedAt = performance.now(); observer.disconnect();
  }
}).observe(document, {attributes: true, subtree: true, attributeFilter: ['data-test-script-state']});"""


def test_the_overviews_glance_waits_in_a_section_until_opened(populated, db_path, monkeypatch):
    """The Overview's first render draws no chart; opened, the glance is the newest experiment's
    outcome chart (four classes, each a line and its CI band)."""
    at = app(db_path, monkeypatch, "overview", {"exp": "exp-dash"})
    assert not at.exception and not at.get("plotly_chart"), at.exception
    assert any("how samples fail as α moves" in e.label for e in at.expander)
    at.session_state["open-glance"] = True
    at.run()
    (chart,) = at.get("plotly_chart")
    assert len(json.loads(chart.proto.spec)["data"]) == 8


@pytest.mark.browser
def test_the_overview_loads_plotly_after_its_script_has_ended(server, page):
    """The Overview draws no chart: it fetches Streamlit's Plotly chunk only after its script ended
    (the chunk's run would hold the browser's main thread while the page is drawn), and still fetches
    it, for the chart page opened next."""
    chunk = re.compile(r"/static/js/PlotlyChart\.[\w-]+\.js$")
    page.add_init_script(SCRIPT_ENDED)
    with page.expect_response(lambda r: chunk.search(r.url) is not None, timeout=60000) as response:
        page.goto(server)
    assert response.value.status == 200 and page.locator(".js-plotly-plot").count() == 0
    fetched = page.evaluate(
        "performance.getEntriesByType('resource').find(e => e.name.includes('/PlotlyChart.')).startTime"
    )
    ended = page.evaluate("window.scriptEndedAt")
    assert ended is not None and fetched > ended, (ended, fetched)


@pytest.mark.browser
def test_an_opened_section_is_in_the_link_and_a_link_opens_it(server, page):
    """Opening a section writes it into the page's URL, a filter change keeps it there, and that
    URL, opened in a new page, shows the section open with its table: a shared link shows what
    its sender saw, as it did when the tables were not in sections."""
    page.goto(f"{server}/frontier?exp=exp-dash")
    wait_plots(page, 4)
    page.get_by_text("Optimization failures by first failing tier").click()
    page.wait_for_function("location.search.includes('open-tiers=true')", timeout=60000)
    page.get_by_role("combobox", name="Difficulty").click()
    page.get_by_role("option", name="hard", exact=True).click()
    page.wait_for_function("location.search.includes('difficulty=hard')", timeout=60000)
    assert "open-tiers=true" in page.url
    fresh = page.context.browser.new_page()  # a new session: only the URL carries the view
    try:
        fresh.goto(page.url)
        grids = fresh.locator("[data-testid='stDataFrame']")
        fresh.wait_for_function("document.querySelectorAll(\"[data-testid='stDataFrame']\").length >= 2", timeout=60000)
        assert grids.count() == 2  # the Frontier table and the tier table
        assert fresh.locator("[data-testid='stExpander'] details[open]").count() == 1
    finally:
        fresh.close()  # its session would go on using the server's CPU in later tests
