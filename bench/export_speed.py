"""Figure exports: the dashboard's "Export all figures" zip (5 figures × HTML/PNG/SVG/PDF) with
kaleido's browser started once in the background (what app.py does), against kaleido's default
of a fresh Chromium per image, measured in the same run.

    .venv/bin/python bench/export_speed.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import plotly.graph_objects as go

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dashboard.exports import figures_zip, start_export_engine


def figures() -> dict[str, go.Figure]:
    rng = np.random.default_rng(0)
    return {f"fig{i}": go.Figure(go.Scatter(x=np.arange(50), y=rng.random(50))) for i in range(5)}


def timed(step) -> float:
    start = time.perf_counter()
    step()
    return time.perf_counter() - start


def main() -> None:
    figs = figures()
    baseline = timed(lambda: figures_zip(figs))  # no server yet: kaleido starts a browser per image
    start = timed(start_export_engine)  # in the dashboard this runs in the background after the first page
    ours = timed(lambda: figures_zip(figs))
    first = timed(lambda: figures_zip({"one": figs["fig0"]}, formats=("png",)))
    print(
        f"zip of 5 figures × 4 formats: per-image browser {baseline:.1f} s, warm engine {ours:.1f} s, "
        f"ratio {ours / baseline:.2f}×"
    )
    print(f"engine start (background) {start:.1f} s; one PNG once warm {first:.2f} s")


if __name__ == "__main__":
    main()
