"""The α axis's endpoint lines and extrapolation shade, added in one assignment, are the shapes
Plotly's own add_vline/add_vrect make (the independent reference), on a plain figure and on every
panel of a 2 × 2 grid."""

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.plots import ENDPOINT_LINE, mark_alpha_axis, outcome_fractions

ALPHAS = [-0.5, 0.0, 0.5, 1.0, 1.5]


def _grid() -> go.Figure:
    fig = make_subplots(rows=2, cols=2, shared_xaxes=True)
    for panel in range(4):
        fig.add_scatter(x=ALPHAS, y=ALPHAS, row=panel // 2 + 1, col=panel % 2 + 1)
    return fig


def _by_plotly(fig: go.Figure, row=None, col=None) -> None:
    where = dict(row=row, col=col) if row else {}
    for x0, x1 in ((-0.5, 0.0), (1.0, 1.5)):
        fig.add_vrect(x0=x0, x1=x1, fillcolor="#000000", opacity=0.07, line_width=0, layer="below", **where)
    for x in (0, 1):
        fig.add_vline(x=x, line=ENDPOINT_LINE, **where)


def _shapes(fig: go.Figure) -> list[dict]:
    return [s.to_plotly_json() for s in fig.layout.shapes]


def test_the_shapes_are_plotlys_on_a_plain_figure():
    ours, theirs = go.Figure(go.Scatter(x=ALPHAS, y=ALPHAS)), go.Figure(go.Scatter(x=ALPHAS, y=ALPHAS))
    mark_alpha_axis(ours, ALPHAS, label=False)
    _by_plotly(theirs)
    assert _shapes(ours) == _shapes(theirs) and len(_shapes(ours)) == 4


def test_the_shapes_are_plotlys_on_every_panel_of_a_grid():
    ours, theirs = _grid(), _grid()
    for panel in range(4):
        mark_alpha_axis(ours, ALPHAS, row=panel // 2 + 1, col=panel % 2 + 1, label=False)
        _by_plotly(theirs, row=panel // 2 + 1, col=panel % 2 + 1)
    assert _shapes(ours) == _shapes(theirs)
    assert {s["xref"] for s in _shapes(ours)} == {"x", "x2", "x3", "x4"}


def test_no_shade_inside_the_endpoints():
    fig = go.Figure()
    mark_alpha_axis(fig, [0.0, 0.5, 1.0])
    assert [s["type"] for s in _shapes(fig)] == ["line", "line"] and not fig.layout.annotations


def test_the_outcome_chart_marks_each_panel_once():
    import polars as pl

    table = pl.DataFrame({"alpha": ALPHAS, **{c: [0.25] * 5 for c in ("correct", "optimization_failure",
                         "correctness_failure", "format_failure")}})  # fmt: skip
    shapes = _shapes(outcome_fractions(table))
    assert len(shapes) == 4 * 4  # per panel: two shades, two endpoint lines
    assert sorted((s["xref"], s["x0"]) for s in shapes if s["type"] == "line") == sorted(
        (x, v) for x in ("x", "x2", "x3", "x4") for v in (0, 1)
    )
