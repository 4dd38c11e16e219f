import io
import json
import struct
import zipfile

import plotly.graph_objects as go
import plotly.io as pio
import pytest

from dashboard.exports import export_engine_running, figure_bytes, figures_zip, start_export_engine

pytestmark = pytest.mark.browser


def test_figures_zip_holds_every_format_of_every_figure():
    figs = {"a": go.Figure(go.Scatter(x=[0, 1], y=[1, 0])), "b": go.Figure(go.Bar(x=["x"], y=[2]))}
    calls = []
    z = zipfile.ZipFile(io.BytesIO(figures_zip(figs, progress=lambda done, total: calls.append((done, total)))))
    # one step per file written, out of 2 figures × (5 formats + their paper-mode PDF and SVG)
    assert calls == [(i, 14) for i in range(1, 15)]
    expected = [f"{n}.{fmt}" for n in figs for fmt in ("json", "html", "png", "svg", "pdf")]
    expected += [f"paper/{n}.{fmt}" for n in figs for fmt in ("pdf", "svg")]
    assert sorted(z.namelist()) == sorted([*expected, "manifest.json"])
    manifest = json.loads(z.read("manifest.json"))
    assert manifest["files"] == sorted(expected) and set(manifest["figures"]) == {"a", "b"}
    assert z.read("paper/a.pdf")[:5] == b"%PDF-"
    assert b'width="317"' in z.read("paper/a.svg")  # 3.3 in at 96 px to the inch
    assert pio.from_json(z.read("a.json").decode()) == figs["a"]  # the figure itself, as the page draws it
    assert z.read("a.png")[:8] == b"\x89PNG\r\n\x1a\n"
    assert z.read("a.pdf")[:5] == b"%PDF-"
    assert z.read("a.svg").lstrip().startswith(b"<svg")
    assert len(z.read("a.html")) > 3_000_000  # plotly.js embedded (offline use is checked in the browser test)


def test_the_export_engine_starts_once_and_serves_later_images():
    start_export_engine()
    start_export_engine()  # a second session's start is a no-op, not a second browser
    assert export_engine_running()
    png = figure_bytes(go.Figure(go.Scatter(x=[0, 1], y=[1, 0])), "png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", png[16:24]) == (2000, 1200)


def test_a_figure_with_its_own_size_keeps_it_in_the_png():
    """The frontier scatter's labels are placed for 900 × 640 px: its export is drawn at that size."""
    from dashboard.scatter import HEIGHT, WIDTH, failure_scatter
    from tests.analysis.test_scatter_labels import SWEEPS

    png = figure_bytes(failure_scatter(SWEEPS["close pairs"]), "png")
    assert struct.unpack(">II", png[16:24]) == (2 * WIDTH, 2 * HEIGHT) == (1800, 1280)
