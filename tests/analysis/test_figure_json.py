"""Figures a reviewer accepts (issue #48), checked on each figure's JSON."""

import json

import plotly.io as pio
import polars as pl
import pytest

from dashboard.passk_plots import best_single_name, passk_figure
from dashboard.plots import outcome_fractions, solve_rate
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


def test_passk_draws_a_band_on_every_curve_with_a_ci_and_names_each_pools_size():
    rows = [{"label": f"c{i}" if i < 4 else f"pool: p{i}", "k": k, "pass_at_k": 0.1 * i + 0.01 * k, "lo": 0.1 * i,
             "hi": 0.1 * i + 0.05, "members": 1 if i < 4 else i} for i in range(6) for k in (1, 2, 4)]  # fmt: skip
    best = pl.DataFrame({"k": [1, 2], "pass_at_k": [0.5, 0.6], "lo": [0.4, 0.5], "hi": [0.6, 0.7],
                         "checkpoint": ["c3", "c3"]})  # fmt: skip
    fig = as_json(passk_figure(pl.DataFrame(rows), best=best))
    bands = [t for t in fig["data"] if t.get("fill") == "toself"]
    assert len(bands) == 7  # the six curves' and the best single's (its held-out CI, from the gain table)
    assert all(b.get("visible", True) is True and b["showlegend"] is False for b in bands)
    curves = [t["name"] for t in fig["data"] if t.get("fill") != "toself"]
    assert curves[4:6] == ["pool: p4, 4 checkpoints", "pool: p5, 5 checkpoints"] and curves[0] == "c0"
    (black,) = [b for b in bands if b["name"].startswith("best single")]
    assert black["y"] == [0.6, 0.7, 0.5, 0.4]  # hi along k, then lo back


def test_every_alpha_panel_has_endpoint_lines_with_a_width_and_its_extrapolation_shaded():
    for fig in (outcome_fractions(frontier_rows()), outcome_fractions(frontier_rows(), stacked=True),
                solve_rate(frontier_rows())):  # fmt: skip
        shapes = as_json(fig)["layout"]["shapes"]
        panels = sorted({s["xref"] for s in shapes})
        assert panels == (["x", "x2", "x3", "x4"] if len(shapes) > 4 else ["x"])
        for panel in panels:
            mine = [s for s in shapes if s["xref"] == panel]
            # the simple_white template draws a line of no width: each sets its own
            assert [(s["x0"], s["line"]["width"]) for s in mine if s["type"] == "line"] == [(0, 1.2), (1, 1.2)]
            rects = [(s["x0"], s["x1"], s["layer"]) for s in mine if s["type"] == "rect"]
            assert rects == [(-0.5, 0.0, "below"), (1.0, 1.5, "below")]  # the grid runs from -0.5 to 1.5


def test_each_outcome_class_has_a_panel_with_its_ci_as_a_band():
    table = frontier_rows()
    fig = as_json(outcome_fractions(table))
    merged = table.filter(pl.col("alpha").is_not_null())
    for i, cls in enumerate(("correct", "optimization_failure", "correctness_failure", "format_failure")):
        band, line = fig["data"][2 * i], fig["data"][2 * i + 1]
        assert band["fill"] == "toself" and band["xaxis"] == line["xaxis"] == ("x" if i == 0 else f"x{i + 1}")
        assert band["y"] == merged[f"{cls}_hi"].to_list() + merged[f"{cls}_lo"].to_list()[::-1]
        drawn = outcome_fractions(table).data[2 * i + 1]  # its arrays as drawn (the JSON packs them as binary)
        assert list(drawn.y) == merged[cls].to_list() and list(drawn.x) == merged["alpha"].to_list()


def test_bands_are_fills_without_markers_at_their_corners():
    rows = [{"label": "c", "k": k, "pass_at_k": 0.1 * k, "lo": 0.05 * k, "hi": 0.15 * k} for k in (1, 2, 4)]
    for fig in (solve_rate(frontier_rows()), passk_figure(pl.DataFrame(rows))):
        bands = [t for t in as_json(fig)["data"] if t.get("fill") == "toself"]
        assert bands and all(t["mode"] == "lines" for t in bands)


def test_best_single_named_with_where_each_checkpoint_is_best():
    assert best_single_name([1, 2, 3, 4, 5], ["α=1.5"] * 4 + ["α=1.25"]) == (
        "best single at each k: α=1.5 at k 1–4, α=1.25 at k 5"
    )


def test_passk_draws_the_best_single_as_a_curve_of_its_own():
    rows = [{"label": c, "k": k, "pass_at_k": 0.1 * k, "lo": 0.05, "hi": 0.5} for c in ("a", "b") for k in (1, 2)]
    best = pl.DataFrame({"k": [1, 2], "pass_at_k": [0.3, 0.4], "checkpoint": ["b", "a"]})
    fig = passk_figure(pl.DataFrame(rows), best=best)
    (curve,) = [t for t in fig.data if t.name.startswith("best single")]
    assert list(curve.y) == [0.3, 0.4] and list(curve.customdata) == ["b", "a"] and curve.line.dash == "dash"
    bands = [t for t in fig.data if t.fill == "toself"]
    assert bands and all(b.line.width > 0 for b in bands)  # edges drawn: overlapping fills still show where each ends


def test_paper_mode_drops_title_ids_and_hidden_entries_at_a_column_width():
    from dashboard.paper_mode import paper_figure

    rows = [{"label": f"c{i} (exp-7)", "k": k, "pass_at_k": 0.1 * i, "lo": 0.0, "hi": 0.5} for i in range(5)
            for k in (1, 2)]  # fmt: skip
    fig = passk_figure(pl.DataFrame(rows), experiment="sweep (exp-7)")
    fig.data[-1].visible = "legendonly"  # a curve the reader hid in the legend: not drawn, not in the paper
    paper = as_json(paper_figure(fig))
    assert "title" not in paper["layout"] or not paper["layout"]["title"].get("text")
    assert paper["layout"]["width"] == 317  # 3.3 in at 96 px to the inch
    assert paper["layout"]["font"]["size"] == 10
    names = [t["name"] for t in paper["data"]]
    assert len(names) == 5 + 5 - 1  # five curves and their bands, less the hidden one
    assert not [n for n in names if "exp-7" in n]


def test_paper_churn_grid_reads_its_rates_from_the_json_the_page_exports():
    """The page's export buttons render a figure read back from its JSON, where plotly writes a numpy
    array as base64 {"dtype", "bdata"}: the paper grid decodes it (its buttons were missing on the
    Churn page while the zip, which passes the figure itself, had them)."""
    import numpy as np

    from dashboard.paper_mode import PAPER_ROWS, churn_for_print
    from dashboard.plots import churn_heatmap

    problems, labels = [f"lab/p{i:02d}" for i in range(25)], ["α=-0.5", "α=0", "α=1", "SFT"]
    swing = np.arange(25) / 24  # row i moves by i/24 along α: the last PAPER_ROWS rows move most
    rates = np.stack([np.zeros(25), swing / 2, swing, swing / 4], axis=1)
    n = np.full((25, 4), 8)
    fig = churn_heatmap(rates, problems, problems, labels, np.rint(rates * 8).astype(int), n)
    page = pio.from_json(pio.to_json(fig, validate=False))
    assert isinstance(page.data[0].marker.color, dict)  # the base64 form, as the page has it
    paper = churn_for_print(page).data[0]
    assert list(paper.y) == [f"p{i:02d}" for i in range(25 - PAPER_ROWS, 25)]  # the page's order, kept
    assert list(paper.x) == ["−0.5", "0", "1", "SFT"]
    assert np.asarray(paper.z).tolist() == rates[25 - PAPER_ROWS :].tolist()
