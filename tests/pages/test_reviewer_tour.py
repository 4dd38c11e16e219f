"""What a reviewer's tour of the dashboard found (issue 68), each held in Chromium on one server:
degenerate data says why its charts are flat, bad link values are said in one line, and pass@k
draws a band on every curve that has a CI, its pools named with their size."""

import dataclasses

import pytest

from backend.records import Evaluation, Experiment, Sample
from tests.pages.browser import serve, wait_plots

pytestmark = pytest.mark.browser


@pytest.fixture
def tour_server(populated, db_path, tmp_path):
    """The test sweep, and a copy of it where every sample is a format failure (no runnable program)."""
    store = populated
    store.put([dataclasses.replace(store.get(Experiment, "exp-dash"), id="exp-format", name="every sample unparsable")])
    store.put([dataclasses.replace(s, experiment_id="exp-format", code=None, extract_error="no code")
               for s in store.select(Sample, {"experiment_id": "exp-dash"})])  # fmt: skip
    store.put([dataclasses.replace(e, experiment_id="exp-format", outcome="format_failure", verdict="FORMAT")
               for e in store.select(Evaluation, {"experiment_id": "exp-dash"})])  # fmt: skip
    yield from serve(db_path, tmp_path)


CHART = """(i) => { const gd = document.querySelectorAll('.js-plotly-plot')[i];
    const ticks = (axis) => Array.from(gd.querySelectorAll(`.${axis}tick text`)).map(t => t.textContent);
    return {title: gd._fullLayout.title.text, x: ticks('x'), y: ticks('y'), yrange: gd._fullLayout.yaxis.range,
            notes: (gd._fullLayout.annotations || []).map(a => a.text)}; }"""


def warnings(page) -> list[str]:
    return [t.strip() for t in page.locator("[data-testid='stAlertContentWarning']").all_inner_texts()]


def test_degenerate_data_bad_links_and_every_passk_band(tour_server, page):
    page.goto(f"{tour_server}/frontier?exp=exp-format")
    wait_plots(page, 4)
    page.get_by_text("No optimization or correctness failure among these samples: 100% are format failures").wait_for(
        timeout=60000
    )
    scatter, trend = page.evaluate(CHART, 1), page.evaluate(CHART, 3)
    assert any("no frontier to draw" in n for n in scatter["notes"])  # the chart says why, not only the page
    assert len(set(scatter["x"])) > 1 and len(set(scatter["y"])) > 1, scatter  # ticks that read 0 %, 1 %, …
    assert "Failure shares along α" in trend["title"]
    assert 0 <= trend["yrange"][0] < trend["yrange"][1] <= 1, trend  # a share, not −100 % … 100 %
    assert any("no frontier to draw" in n for n in trend["notes"])

    page.goto(f"{tour_server}/frontier?exp=exp-dash&tier=99")
    wait_plots(page, 4)
    assert "“Time-outs below tier count as wrong” has no choice '99' here (from the link or an earlier page); " \
        "showing none instead." in warnings(page)  # fmt: skip
    page.goto(f"{tour_server}/problem?exp=exp-dash&problem=t/nope&alpha=7")
    page.get_by_text("Samples compared across α").wait_for(timeout=60000)
    said = warnings(page)
    assert any(w.startswith("“Problem” has no choice 't/nope' here") for w in said), said
    assert "“α” has no choice '7' here (from the link or an earlier page); showing α = 0 instead." in said

    page.goto(f"{tour_server}/passk?exp=exp-dash")
    wait_plots(page, 2)
    traces = page.evaluate("""() => document.querySelectorAll('.js-plotly-plot')[0]._fullData
        .filter(t => t.visible === true).map(t => ({name: t.name, band: t.fill === 'toself'}))""")
    curves = [t["name"] for t in traces if not t["band"]]
    bands = [t["name"] for t in traces if t["band"]]
    assert sorted(bands) == sorted(f"{c}: 95% CI" for c in curves)  # every curve's band drawn, the best single's too
    pools = [c for c in curves if c.startswith("pool: ")]
    assert pools and all(c.endswith(" checkpoints") for c in pools), pools  # "pool: all interpolated, 3 checkpoints"
    assert any(c.startswith("best single at each k") for c in curves)
