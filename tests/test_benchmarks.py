"""The analysis benchmark runs in CI (its figures are printed, never asserted: timing is not a test)."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_analysis_benchmark_runs(tmp_path):
    out = subprocess.run(
        [sys.executable, "bench/analysis_speed.py", "--db", str(tmp_path / "bench.duckdb")],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    print(out.stdout)
    assert "SYNTHETIC data: 20 checkpoints x 1000 problems x 250 samples = 5,000,000 rows" in out.stdout
    assert re.search(r"ratio \(pandas / ours\), total: [\d.]+x", out.stdout)
