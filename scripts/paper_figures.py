"""The docs' paper-mode figures (docs/screenshots/paper-*.{png,pdf}): the Frontier's four figures,
the churn grid and the pass@k figure of the committed miniature lab, as the pages' paper-mode
exports write them.

    PYTHONPATH=$PWD .venv/bin/python scripts/paper_figures.py [OUT_DIR]
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(out: Path) -> None:
    db = Path(tempfile.mkdtemp()) / "lab.duckdb"
    os.environ["FLAB_DB"] = str(db)  # dashboard.data reads it on every call
    from backend.lab.artifacts import ARTIFACTS, import_results
    from backend.store import Store

    import_results(Store(db))
    exp = json.loads((ARTIFACTS / "recipe.json").read_text())["sweep_experiment"]

    from backend.store_queries import EVERY_SAMPLE
    from dashboard.experiment_view import ExperimentView
    from dashboard.exports import paper_bytes
    from dashboard.figures import Selection, churn_figure, frontier_figures, passk_chart

    sel = Selection(exp=exp)
    v = ExperimentView.build(db, exp, EVERY_SAMPLE)
    figures = {name: fig for name, (fig, _) in frontier_figures(v, sel).items()}
    figures["churn_heatmap"] = churn_figure(v, sel)[0]
    figures["passk_curves"] = passk_chart(v, replace(sel))[0]
    out.mkdir(parents=True, exist_ok=True)
    for name, fig in figures.items():
        for fmt in ("pdf", "png"):
            (out / f"paper-{name}.{fmt}").write_bytes(paper_bytes(fig, fmt))
        print(f"wrote {out}/paper-{name}.pdf and .png")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "screenshots")
