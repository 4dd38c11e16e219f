"""scripts/paper_figures.py (`make paper-figures`) writes the docs' paper-mode figures: the Frontier's
four figures, the churn grid and the pass@k figure of the committed lab, each a PDF 3.3 inches wide (a two-column
figure) and a 300 dpi PNG of the same width."""

import os
import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FIGURES = {"churn_heatmap", "frontier_scatter", "outcomes_vs_alpha", "passk_curves", "solve_rate", "trend_bands"}


def test_paper_figures_are_a_column_wide(tmp_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "paper_figures.py"), str(tmp_path)],
        cwd=ROOT,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert {p.name for p in tmp_path.iterdir()} == {f"paper-{n}.{f}" for n in FIGURES for f in ("pdf", "png")}
    for name in FIGURES:
        box = re.search(rb"MediaBox \[0 0 ([\d.]+) ", (tmp_path / f"paper-{name}.pdf").read_bytes())
        assert float(box.group(1)) == pytest.approx(3.3 * 72, abs=1), name  # points
        png = (tmp_path / f"paper-{name}.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(png[16:20], "big") == pytest.approx(3.3 * 300, abs=2)
