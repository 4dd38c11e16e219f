"""The frontier scatter's labels as Chromium draws them (issue #48): plotly.js lays the figure out,
and the labels' text, the visible markers and the CI bars are measured from the page itself, so
this checks the estimate in test_scatter_labels.py against the real glyphs."""

import pytest

from dashboard.scatter import failure_scatter
from tests.analysis.test_scatter_labels import ALPHAS, SWEEPS

pytestmark = pytest.mark.browser

MEASURE = """() => {
    const box = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
    const visible = (e) => parseFloat(getComputedStyle(e).opacity || "1") > 0 && e.style.opacity !== "0";
    const plot = document.querySelector('.nsewdrag');
    return {
        labels: Array.from(document.querySelectorAll('.annotation-text')).map(e => [e.textContent, box(e)]),
        markers: Array.from(document.querySelectorAll('.scatterlayer .point')).filter(visible).map(box),
        bars: Array.from(document.querySelectorAll('.errorbar path')).map(box),
        plot: box(plot),
    };
}"""


def overlaps(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


@pytest.mark.parametrize("name", SWEEPS)
def test_labels_clear_of_each_other_the_points_and_the_bars_in_chromium(page, tmp_path, name):
    html = tmp_path / "scatter.html"
    html.write_text(failure_scatter(SWEEPS[name], experiment="test sweep").to_html(include_plotlyjs=True))
    page.goto(html.as_uri())
    page.wait_for_selector(".annotation-text", timeout=60000)
    drawn = page.evaluate(MEASURE)
    labels = dict(drawn["labels"])
    assert sorted(labels) == sorted([f"α={a:g}" for a in ALPHAS] + ["SFT"])
    assert len(drawn["markers"]) == 10 and len(drawn["bars"]) == 20  # 10 points, an x and a y bar each
    for text, box in labels.items():
        assert not [o for o in labels if o != text and overlaps(box, labels[o])], text
        assert not any(overlaps(box, m) for m in drawn["markers"]), text
        assert not any(overlaps(box, b) for b in drawn["bars"]), text
        p = drawn["plot"]
        assert p[0] <= box[0] and box[2] <= p[2] and p[1] <= box[1] and box[3] <= p[3], text
