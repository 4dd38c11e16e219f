"""What pages start with and how their axes read (issue 18's defaults and axes)."""

import numpy as np
import polars as pl
import pytest

from backend.analysis.frame import Outcomes, default_passk_selection
from dashboard.passk_plots import passk_figure
from dashboard.plots import churn_heatmap
from dashboard.training_plots import training_curves


def outcomes(alphas, correct_per_ckpt) -> Outcomes:
    c = np.array([correct_per_ckpt] * 3)  # 3 problems × C checkpoints, n = 4
    ids = [f"c{i}" for i in range(len(alphas))]
    return Outcomes(["p1", "p2", "p3"], ["t"] * 3, [None] * 3, ids, ids, alphas, ["x"] * len(alphas),
                    np.full(c.shape, 4), {"correct": c})  # fmt: skip


def test_passk_starts_with_the_endpoints_and_picks_no_best_single_in_sample():
    """The best single is the gain table's held-out curve (ExperimentView.held_out_best), never
    the checkpoint with the highest in-sample pass@1 (here α=1.5)."""
    o = outcomes([-1.0, -0.5, 0.0, 0.5, 1.0, 1.5], [0, 0, 1, 1, 2, 3])
    assert default_passk_selection(o) == ["c2", "c4"]  # α=0, α=1
    o = outcomes([-1.0, 0.0, 1.0], [0, 2, 1])
    assert default_passk_selection(o) == ["c1", "c2"]


def test_passk_axes_with_all_zero_data():
    curves = pl.DataFrame({"label": ["a"] * 16, "k": list(range(1, 17)), "pass_at_k": [0.0] * 16})
    fig = passk_figure(curves)
    assert list(fig.layout.yaxis.range) == [0, 0.05]  # fitted, never below 0 for a share, never a zero span
    assert list(fig.layout.xaxis.tickvals) == [1, 2, 5, 10] and list(fig.layout.xaxis.ticktext) == ["1", "2", "5", "10"]


def test_passk_axis_fitted_to_curves_and_bands_with_overlay_colours():
    """Two experiments' pools between 80 % and 88 %: the y axis fits them (with the bands), not
    0–100 %; each experiment one colour, each pool one dash; hovers carry the CI and n."""
    rows = [{"experiment": e, "label": lab, "k": k, "pass_at_k": base + 0.01 * k, "lo": base + 0.01 * k - 0.02,
             "hi": base + 0.01 * k + 0.02, "members": m, "n_problems": 30}
            for e, base in (("A", 0.80), ("B", 0.82)) for lab, m in (("best single", 1), ("all interpolated", 5))
            for k in (1, 2, 4)]  # fmt: skip
    fig = passk_figure(pl.DataFrame(rows))
    lo, hi = fig.layout.yaxis.range
    assert lo == pytest.approx(0.79 - 0.09 * 0.12) and hi == pytest.approx(0.88 + 0.09 * 0.12)  # 79 %–88 % padded
    lines = [t for t in fig.data if t.mode == "lines" and t.fill != "toself"]  # the bands are line-mode fills
    bands = [t for t in fig.data if t.fill == "toself"]
    assert len(lines) == 4 and len(bands) == 4
    assert [t.name for t in lines] == ["A: best single", "A: all interpolated, 5 checkpoints", "B: best single",
                                       "B: all interpolated, 5 checkpoints"]  # fmt: skip
    assert lines[0].line.color == lines[1].line.color != lines[2].line.color == lines[3].line.color
    assert lines[0].line.dash == lines[2].line.dash != lines[1].line.dash
    assert list(bands[0].y) == pytest.approx([0.83, 0.84, 0.86, 0.82, 0.80, 0.79])  # hi along k, then lo back
    assert list(lines[1].customdata[0]) == ["A: all interpolated, 5 checkpoints", "79.0%–83.0%", 30, " · 5 members"]


def test_churn_columns_are_labelled_on_screen():
    rates = np.zeros((40, 3))
    fig = churn_heatmap(rates, [f"p{i}" for i in range(40)], ["t"] * 40, ["α=0", "α=0.5", "α=1"],
                        np.zeros((40, 3), int), np.ones((40, 3), int))  # fmt: skip
    assert fig.layout.xaxis.side == "top" and fig.layout.xaxis.dtick == 1  # above the tall grid, every column


def test_training_figures_have_y_titles():
    m = pl.DataFrame({"step": [1, 1, 2, 2], "name": ["reward_mean", "pass_R_1"] * 2, "value": [0.1, 1.0, 0.2, 1.0]})
    figs = training_curves(m)
    assert figs["reward"].layout.yaxis.title.text == "mean reward"
    assert "100% when a problem has none" in figs["pass_per_tier"].layout.title.text
    assert all(f.layout.yaxis.title.text for f in figs.values())


def test_a_finished_stage_keeps_its_rate(monkeypatch):
    import time as clock

    from backend.sweep.pipeline import Progress

    written = []
    store = type("S", (), {"update": lambda self, cls, key, **kw: written.append(kw["progress"])})()
    progress, now = Progress(store, "job"), [100.0]
    monkeypatch.setattr(clock, "time", lambda: now[0])
    progress.set_total("judge", 10)
    now[0] = 110.0
    progress.reached("judge", 10)  # 10 in 10 s
    now[0] = 200.0
    progress.set_total("other", 1)  # any later flush
    assert written[-1]["judge"]["rate"] == 1.0
