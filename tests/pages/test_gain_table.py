"""The pass@k page's gain table and figure name their baseline at each k (issue #48), as the pages
name checkpoints, on a real DuckDB file (tests/pages/conftest.py's experiment, relabelled)."""

import json

import numpy as np
import plotly.io as pio

from backend.records import Checkpoint, Evaluation
from dashboard.experiment_view import ExperimentView
from dashboard.figures import Selection, gains_chart
from dashboard.paper_views import BASELINE
from dashboard.passk_plots import MAX_BANDS

LABELS = {"m-0.5": "α=-0.5", "m0": "α=0", "m0.5": "α=0.5", "m1": "α=1", "m1.5": "α=1.5", "r3": "SFT"}


def test_gain_table_and_figure_name_the_best_single_at_each_k(populated, db_path):
    for c, label in LABELS.items():
        populated.update(Checkpoint, (c,), label=label)
    v = ExperimentView.build(db_path, "exp-dash")
    # a custom pool beside the standard ones: four pools, so four bands to draw
    fig, table = gains_chart(v, Selection("exp-dash", custom=("m0", "m1")))
    merged = {label for c, label in LABELS.items() if c != "r3"}  # the best single is chosen among merged ones
    assert set(table[BASELINE]) <= merged
    # k = 1, from the raw rows: the merged checkpoint with the highest mean share of correct samples
    evals = populated.select(Evaluation, {"experiment_id": "exp-dash"})
    share = {
        c: np.mean([np.mean([e.outcome == "correct" for e in evals if (e.checkpoint_id, e.problem_id) == (c, p)])
                    for p in {e.problem_id for e in evals}])
        for c in LABELS if c != "r3"
    }  # fmt: skip
    best = max(share.values())
    at1 = set(table.filter(table["k"] == 1)[BASELINE])
    assert len(at1) == 1 and at1 <= {LABELS[c] for c, s in share.items() if s == best}
    figure = json.loads(pio.to_json(fig, validate=False))
    lines = [t for t in figure["data"] if t.get("mode") == "lines+markers"]
    (best,) = [t for t in lines if t["name"].startswith("best single at each k: ")]  # the zero line, named
    lines.remove(best)
    assert best["customdata"] == table.filter(table["pool"] == "best single").sort("k")[BASELINE].to_list()
    for t in lines:  # every point's hover says what its gain is over
        rows = table.filter(table["pool"] == t["name"]).sort("k")
        assert [d[0] for d in t["customdata"]] == rows[BASELINE].to_list()
        assert "over %{customdata[0]}" in t["hovertemplate"]
    bands = [t for t in figure["data"] if t.get("fill") == "toself"]
    assert len(bands) == len(lines) > MAX_BANDS
    assert sum(b.get("visible", True) is True for b in bands) == MAX_BANDS  # the rest on demand
    assert all(b["mode"] == "lines" for b in bands)  # no markers at a band's corners
