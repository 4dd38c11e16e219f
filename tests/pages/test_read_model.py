"""One read model per view (issue #48): the export zip holds the pages' own figures."""

import io
import json
import zipfile

import pytest
import streamlit as st

from tests.pages.test_apptest import app

# a view with a filter, a churn row order, a pass@k selection and a custom pool: all of it travels
VIEW = {"exp": "exp-dash", "difficulty": "hard", "order": "cluster", "ck": "m0,m1.5", "pool": "m-0.5,m1.5"}
PAGES = {
    "frontier": ["outcomes_vs_alpha", "frontier_scatter", "solve_rate", "trend_bands"],
    "churn": ["churn_heatmap"],
    "passk": ["passk_curves", "ensemble_gains"],
}  # each page's charts, in the order it draws them


@pytest.mark.slow
def test_the_zips_figures_are_the_pages_figures_byte_for_byte(populated, db_path, monkeypatch):
    offered = {}
    button = st.download_button

    def recording(label, data, *args, **kwargs):  # the bytes the Download button hands the browser
        offered[label] = data
        return button(label, data, *args, **kwargs)

    monkeypatch.setattr(st, "download_button", recording)
    at = app(db_path, monkeypatch, "frontier", VIEW)
    next(b for b in at.button if b.label == "Export all figures of this experiment (zip)").click().run()
    assert not at.exception, at.exception
    z = zipfile.ZipFile(io.BytesIO(offered["Download the zip"]))
    for page, names in PAGES.items():
        shown = app(db_path, monkeypatch, page, VIEW)
        assert not shown.exception, shown.exception
        specs = [c.proto.spec for c in shown.get("plotly_chart")]
        assert len(specs) == len(names)
        for name, spec in zip(names, specs, strict=True):
            assert z.read(f"{name}.json").decode() == spec, name
    heatmap = json.loads(z.read("churn_heatmap.json"))
    assert len(set(heatmap["data"][0]["y"])) == 3  # the hard problems only, as the filter says
    curves = [
        t["name"]
        for t in json.loads(z.read("passk_curves.json"))["data"]
        if t.get("mode") == "lines" and not t.get("fill")
    ]
    assert curves[:2] == ["m0", "m1.5"] and "pool: custom, 2 checkpoints" in curves  # the page's selection only


@pytest.mark.slow
def test_the_benchs_floor_page_draws_the_frontiers_charts(populated, db_path, monkeypatch, tmp_path):
    """bench/dashboard_speed.py's floor (the least a first render of the Frontier can take) draws
    the Frontier page's own charts of the same experiment, in its order, and nothing else."""
    import sys

    from streamlit.testing.v1 import AppTest

    from tests.test_benchmarks import bench_script

    bench = bench_script("dashboard_speed")
    folder = bench.floor_figures(db_path, "exp-dash", tmp_path)
    monkeypatch.setattr(sys, "argv", ["floor_app.py", str(folder)])
    floor = AppTest.from_string(bench.FLOOR_APP, default_timeout=60).run()
    page = app(db_path, monkeypatch, "frontier", {"exp": "exp-dash"})
    assert not floor.exception and not page.exception, (floor.exception, page.exception)
    drawn = [json.loads(c.proto.spec) for c in floor.get("plotly_chart")]  # its keys in another order
    assert drawn == [json.loads(c.proto.spec) for c in page.get("plotly_chart")] and len(drawn) == len(
        PAGES["frontier"]
    )
    assert [e.type for e in floor.main.children.values()] == ["plotly_chart"] * len(
        drawn
    ) and not floor.sidebar.children
