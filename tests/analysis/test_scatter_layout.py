"""The frontier scatter is readable: axes fitted to the data, legible α labels, legend clear of the
colour bar (from the figure's layout, on the miniature lab's real frontier table)."""

import polars as pl

from backend.plots import alpha_labels, failure_scatter, fitted_ranges


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


def test_axes_follow_the_data_with_equal_spans():
    fig = failure_scatter(lab_like_table())
    (x0, x1), (y0, y1) = fig.layout.xaxis.range, fig.layout.yaxis.range
    assert x0 <= 0.820 and x1 >= 0.928 and y0 <= 0.002 and y1 >= 0.074  # every point inside
    assert abs((x1 - x0) - (y1 - y0)) < 1e-12 and x1 - x0 < 0.2  # equal spans, fitted (not 0–100 %)
    assert fig.layout.yaxis.scaleanchor == "x" and y0 >= 0


def test_legend_and_colour_bar_do_not_overlap():
    fig = failure_scatter(lab_like_table())
    legend, bar = fig.layout.legend, fig.data[0].marker.colorbar
    assert legend.orientation == "h" and legend.yanchor == "top" and legend.y < 0  # below the plot
    assert bar.x >= 1.0 and bar.xanchor == "left"  # right of the plot


def test_alpha_labels_stay_legible():
    assert alpha_labels([0, 0.5, 1]) == ["α=0", "α=0.5", "α=1"]
    many = [-1.0, -0.5, 0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0]
    assert [t for t in alpha_labels(many) if t] == ["α=-1", "α=0", "α=1", "α=2"]


def test_ranges_never_go_below_zero():
    (x0, _), (y0, _) = fitted_ranges([0.0, 0.01], [0.0, 0.3])
    assert x0 == 0.0 and y0 == 0.0
