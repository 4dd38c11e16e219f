"""Figures a reviewer accepts (issue #48), checked on each figure's JSON."""

import json

import plotly.io as pio
import polars as pl

from dashboard.plots import MARKERS, MAX_BANDS, SHAPES, failure_scatter, passk_figure, solve_rate


def frontier_rows() -> pl.DataFrame:
    alphas = [-0.5, 0.0, 0.5, 1.0, 1.5, None]
    kinds = ["extrapolated", "endpoint", "interpolated", "endpoint", "extrapolated", "independent"]
    row = {"correctness_failure": 0.3, "optimization_failure": 0.2, "solve_rate": 0.4, "n_samples": 12}
    ci = {f"{c}_{end}": row[c] + (0.05 if end == "hi" else -0.05) for c in
          ("correctness_failure", "optimization_failure", "solve_rate") for end in ("lo", "hi")}  # fmt: skip
    return pl.DataFrame([{"alpha": a, "point_kind": k, "label": f"α={a:g}" if a is not None else "SFT", **row, **ci}
                         for a, k in zip(alphas, kinds, strict=True)])  # fmt: skip


def as_json(fig) -> dict:
    return json.loads(pio.to_json(fig, validate=False))


def test_scatter_names_checkpoints_by_what_they_are_and_explains_its_markers():
    fig = as_json(failure_scatter(frontier_rows()))
    names = [t["name"] for t in fig["data"]]
    assert names == [
        "merged (α)",
        "not merged (evaluated as is)",
    ]  # SFT is the shared start, not "independently trained"
    assert fig["layout"]["legend"]["title"]["text"].startswith(SHAPES)
    for kind, shape in MARKERS.items():  # every shape drawn is explained, in the legend's own words
        assert shape != "circle-open" and kind.replace("independent", "not merged") in SHAPES
    merged = fig["data"][0]
    assert merged["marker"]["symbol"] == ["square", "diamond", "circle", "diamond", "square"]
    assert merged["marker"]["line"]["color"] == "#333"  # filled, outlined: the yellow end stays visible on white
    assert merged["error_x"]["color"].startswith("rgba(") and merged["error_x"]["color"].endswith(",0.4)")


def test_solve_rate_is_one_word_on_its_axis_and_line():
    fig = as_json(solve_rate(frontier_rows()))
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
