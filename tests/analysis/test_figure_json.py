"""Figures a reviewer accepts (issue #48), checked on each figure's JSON."""

import json

import plotly.io as pio
import polars as pl
import pytest

from dashboard.plots import MAX_BANDS, outcome_fractions, passk_figure, solve_rate
from dashboard.scatter import MARKERS, SHAPES, failure_scatter


def frontier_rows() -> pl.DataFrame:
    alphas = [-0.5, 0.0, 0.5, 1.0, 1.5, None]
    kinds = ["extrapolated", "endpoint", "interpolated", "endpoint", "extrapolated", "independent"]
    row = {"correct": 0.4, "correctness_failure": 0.3, "optimization_failure": 0.2, "format_failure": 0.1,
           "solve_rate": 0.4, "n_samples": 12}  # fmt: skip
    ci = {f"{c}_{end}": v + (0.05 if end == "hi" else -0.05) for c, v in row.items() if c != "n_samples"
          for end in ("lo", "hi")}  # fmt: skip
    return pl.DataFrame([{"alpha": a, "point_kind": k, "label": f"α={a:g}" if a is not None else "SFT", **row, **ci}
                         for a, k in zip(alphas, kinds, strict=True)])  # fmt: skip


def as_json(fig) -> dict:
    return json.loads(pio.to_json(fig, validate=False))


def test_scatter_names_checkpoints_by_what_they_are_and_explains_its_markers():
    fig = as_json(failure_scatter(frontier_rows()))
    points = [t for t in fig["data"] if t.get("showlegend") is not False]
    # SFT is the shared start of both endpoints, not "independently trained"
    assert [t["name"] for t in points] == ["merged (α)", "not merged (evaluated as is)"]
    assert fig["layout"]["legend"]["title"]["text"].startswith(SHAPES)
    for kind, shape in MARKERS.items():  # every shape drawn is explained, in the legend's own words
        assert shape != "circle-open" and kind.replace("independent", "not merged") in SHAPES
    merged = points[0]
    assert merged["marker"]["symbol"] == ["square", "diamond", "circle", "diamond", "square"]
    assert merged["marker"]["line"]["color"] == "#333"  # filled, outlined: the top of the α scale stays visible


def rgb(color: str) -> tuple[int, ...]:
    return tuple(int(v) for v in color.removeprefix("rgba(").removeprefix("rgb(").rstrip(")").split(",")[:3])


def contrast_with_white(color: str) -> float:
    """WCAG contrast ratio of a colour against white."""
    lin = [c / 255 / 12.92 if c <= 10 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb(color)]
    return 1.05 / (0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2] + 0.05)


def test_each_points_ci_bars_in_its_own_colour_faded():
    table = frontier_rows()
    fig = as_json(failure_scatter(table))
    bars = [t for t in fig["data"] if t["name"].endswith(": 95% CI")]
    assert [t["name"] for t in bars] == [f"{lab}: 95% CI" for lab in table["label"]]  # one trace per point
    colors = [t["error_x"]["color"] for t in bars]
    assert [t["error_y"]["color"] for t in bars] == colors
    assert all(c.startswith("rgba(") and c.endswith(",0.45)") for c in colors)  # reduced opacity
    assert rgb(colors[0]) == (68, 1, 84)  # the smallest α: Viridis' first colour, as on its marker
    assert len(set(colors[:5])) == 5  # five α, five colours
    assert rgb(colors[5]) == (204, 121, 167)  # the SFT point's own colour (#CC79A7)
    for t, r in zip(bars, table.iter_rows(named=True), strict=True):  # each bar spans its point's CI
        assert t["x"] == [0.3] and t["error_x"]["array"][0] == pytest.approx(r["correctness_failure_hi"] - 0.3)
        assert t["error_y"]["arrayminus"][0] == pytest.approx(0.2 - r["optimization_failure_lo"])
        assert t["marker"]["opacity"] == 0 and t["hoverinfo"] == "skip"


def test_extrapolated_points_stand_out_on_white():
    fig = failure_scatter(frontier_rows())
    bars = [t for t in fig.data if t.name.endswith(": 95% CI")]
    top = bars[4].error_x.color  # α = 1.5, the top of the scale: the pale end of Viridis (1.1:1) is not used
    assert contrast_with_white(top) >= 1.5, top


def test_solve_rate_is_one_word_on_its_axis_and_line_and_defined_on_the_figure():
    fig = as_json(solve_rate(frontier_rows(), experiment="test sweep"))
    assert fig["layout"]["title"]["text"].endswith(
        "<br><sup>Solve rate: a problem's share of correct samples (pass@1), averaged over problems.</sup>"
    )
    assert fig["layout"]["yaxis"]["title"]["text"] == "solve rate (pass@1)"
    assert fig["data"][1]["name"] == "solve rate" and "solve rate %{y" in fig["data"][1]["hovertemplate"]


def test_passk_draws_at_most_three_bands_and_keeps_the_rest_on_demand():
    rows = [{"label": f"c{i}", "k": k, "pass_at_k": 0.1 * i + 0.01 * k, "lo": 0.1 * i, "hi": 0.1 * i + 0.05}
            for i in range(6) for k in (1, 2, 4)]  # fmt: skip
    fig = as_json(passk_figure(pl.DataFrame(rows)))
    bands = [t for t in fig["data"] if t.get("fill") == "toself"]
    assert len(bands) == 6
    drawn = [b for b in bands if b.get("visible", True) is True]
    assert len(drawn) == MAX_BANDS == 3
    assert all(b["visible"] == "legendonly" and b["showlegend"] for b in bands if b not in drawn)


def test_interpolation_marked_without_tinting_the_stacked_outcomes():
    fig = as_json(outcome_fractions(frontier_rows()))
    shapes = fig["layout"]["shapes"]
    assert [(s["type"], s["x0"], s["line"]["dash"]) for s in shapes] == [("line", 0, "dot"), ("line", 1, "dot")]
    shaded = as_json(solve_rate(frontier_rows()))["layout"]["shapes"][0]  # a band's plot keeps its shade, below
    assert (shaded["type"], shaded["layer"]) == ("rect", "below")


def test_bands_are_fills_without_markers_at_their_corners():
    rows = [{"label": "c", "k": k, "pass_at_k": 0.1 * k, "lo": 0.05 * k, "hi": 0.15 * k} for k in (1, 2, 4)]
    for fig in (solve_rate(frontier_rows()), passk_figure(pl.DataFrame(rows))):
        bands = [t for t in as_json(fig)["data"] if t.get("fill") == "toself"]
        assert bands and all(t["mode"] == "lines" for t in bands)
