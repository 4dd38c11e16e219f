"""The committed lab's numbers do not move when the code under them is reshaped: `analyze frontier`
(with and without the tiny-input tier rule) and `analyze findings` on a fresh import of
artifacts/lab give what frontier-lab gave at 68dfd60, before its evaluations were typed
(tests/fixtures/lab_numbers.json, written by that commit's CLI from the same artifacts). Wording
(labels, criteria, names) may change; every number, class, status and point kind must not, except
where the findings v3 work changed them on purpose: columns it added, the findings' intervals (t
intervals over problems, docs/findings.md's calibration) with the statuses they decide, and F4, now the gain table's row
(tests/analysis/test_one_estimator.py)."""

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import run_cli

EXPECTED = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "lab_numbers.json").read_text())
SWEEP = "sweep-20261205-014312-531889"  # the committed lab's sweep
WORDING = {"label", "criterion", "name"}
ADDED = {"sandbox_errors", "excluded_problems", "opt_min_tier", "tiny_inputs"}  # new keys (findings v3)
# the findings' intervals, made t intervals on purpose, and the statuses they decide (F2 on all 40
# problems: its α = -0.5 part's lower bound moved from +0.011 to -0.000); every statistic stays
RECOMPUTED = {"ci_low", "ci_high", "status"}


def _numbers(value, skip=WORDING | ADDED):
    if isinstance(value, dict):
        return {k: _numbers(v, skip) for k, v in value.items() if k not in skip}
    if isinstance(value, list):
        return [_numbers(v, skip) for v in value if not (isinstance(v, dict) and v.get("finding") == "ensemble")]
    return value


@pytest.fixture(scope="module")
def lab_db(committed_lab_db, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("lab") / "lab.duckdb"
    shutil.copyfile(committed_lab_db, path)  # the committed lab, imported once per run
    return path


@pytest.mark.parametrize("command", sorted(EXPECTED))
def test_the_committed_labs_numbers_are_unchanged(lab_db, command):
    out = run_cli("analyze", *command.split(), "--experiment", SWEEP, "--json", "--db", str(lab_db))
    assert out.returncode == 0, out.stderr
    skip = WORDING | ADDED | (RECOMPUTED if command == "findings" else set())
    assert _numbers(json.loads(out.stdout), skip) == _numbers(EXPECTED[command], skip)
