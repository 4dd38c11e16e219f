"""The frontier scatter is readable: axes fitted to the data and the legend clear of the colour bar
(from the figure's layout, on the miniature lab's real frontier table; its labels: test_scatter_labels.py)."""

import polars as pl
import pytest

from dashboard.plots import fitted_range
from dashboard.scatter import failure_scatter


def lab_like_table() -> pl.DataFrame:
    alphas = [-1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0]
    corr = [0.897, 0.871, 0.849, 0.849, 0.858, 0.884, 0.868, 0.820, 0.835, 0.844, 0.866]
    opt = [0.057, 0.070, 0.074, 0.059, 0.048, 0.024, 0.015, 0.006, 0.004, 0.004, 0.002]
    kind = ["extrapolated"] * 3 + ["endpoint"] + ["interpolated"] * 3 + ["endpoint"] + ["extrapolated"] * 3
    rows = pl.DataFrame({"alpha": alphas, "correctness_failure": corr, "optimization_failure": opt, "point_kind": kind,
                         "label": [f"α={a}" for a in alphas]})  # fmt: skip
    sft = pl.DataFrame({"alpha": [None], "correctness_failure": [0.928], "optimization_failure": [0.033],
                        "point_kind": ["independent"], "label": ["SFT"]}, schema=rows.schema)  # fmt: skip
    return pl.concat([rows, sft])


def test_axes_fitted_to_the_points_and_their_cis_inside_the_unit_square():
    fig = failure_scatter(lab_like_table())
    (x0, x1), (y0, y1) = fig.layout.xaxis.range, fig.layout.yaxis.range
    assert x0 <= 0.820 and x1 >= 0.928 and y0 <= 0.002 and y1 >= 0.074  # every point inside
    assert x0 >= 0 and x1 <= 1 and y0 >= 0 and y1 <= 1
    # each axis fitted to its own data with a 12 % margin, not a shared span nor 0–100 %
    assert x1 - x0 < 0.14 and y1 - y0 < 0.1


def test_legend_and_colour_bar_do_not_overlap():
    fig = failure_scatter(lab_like_table())
    legend = fig.layout.legend
    bar = next(t for t in fig.data if t.name == "merged (α)").marker.colorbar
    assert legend.orientation == "h" and legend.yanchor == "top" and legend.y < 0  # below the plot
    assert bar.x >= 1.0 and bar.xanchor == "left"  # right of the plot


def test_ranges_stay_inside_zero_and_one():
    assert fitted_range([0.0, 0.01])[0] == 0.0
    assert fitted_range([0.5, 1.0]) == [0.44, 1.0]
    assert fitted_range([0.2, 0.3]) == pytest.approx([0.188, 0.312])
