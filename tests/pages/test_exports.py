import io
import zipfile

import plotly.graph_objects as go

from backend.plots import figures_zip


def test_figures_zip_holds_every_format_of_every_figure():
    figs = {"a": go.Figure(go.Scatter(x=[0, 1], y=[1, 0])), "b": go.Figure(go.Bar(x=["x"], y=[2]))}
    z = zipfile.ZipFile(io.BytesIO(figures_zip(figs)))
    assert sorted(z.namelist()) == sorted(f"{n}.{fmt}" for n in figs for fmt in ("html", "png", "svg", "pdf"))
    assert z.read("a.png")[:8] == b"\x89PNG\r\n\x1a\n"
    assert z.read("a.pdf")[:5] == b"%PDF-"
    assert z.read("a.svg").lstrip().startswith(b"<svg")
    assert len(z.read("a.html")) > 3_000_000  # plotly.js embedded (offline use is checked in the browser test)
