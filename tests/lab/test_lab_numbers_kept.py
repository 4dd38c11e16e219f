"""The committed lab's numbers do not move when the code under them is reshaped: `analyze frontier`
(with and without the tiny-input tier rule) and `analyze findings` on a fresh import of
artifacts/lab give what frontier-lab gave at 68dfd60, before its evaluations were typed
(tests/fixtures/lab_numbers.json, written by that commit's CLI from the same artifacts). Wording
(labels, criteria, names) may change; every number, class, status and point kind must not, except
where the findings v3 and v4 work changed them on purpose: columns they added, the findings' intervals (t
intervals over problems, widened for skewness in v4; docs/findings.md's calibration) with the statuses they decide,
the frontier table's intervals (the same interval over problems since v4; every share it prints stays),
F4, now the gain table's row (tests/analysis/test_one_estimator.py), and F3, now the cross-fitted excess
the Churn page shows too (backend/analysis/churn_excess.py)."""

import json
import shutil
from pathlib import Path

import pytest

from backend.store import Store
from tests.conftest import run_cli

EXPECTED = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "lab_numbers.json").read_text())
SWEEP = "sweep-20261205-014312-531889"  # the committed lab's sweep
WORDING = {"label", "criterion", "name"}
ADDED = {"sandbox_errors", "excluded_problems", "opt_min_tier", "tiny_inputs", "power"}  # new keys (findings v3, v4)
REPLACED = ("ensemble", "churn")  # findings whose statistic is a new estimator
# the findings' intervals, made t intervals on purpose, and the statuses they decide (F2 on all 40
# problems: its α = -0.5 part's lower bound moved from +0.011 to -0.000); every statistic stays
RECOMPUTED = {"ci_low", "ci_high", "status"}
# the frontier table's CIs over problems, widened for skewness in v4 on purpose; its shares stay
FRONTIER_CIS = {
    f"{share}_{end}"
    for share in ("correct", "optimization_failure", "correctness_failure", "format_failure", "solve_rate")
    for end in ("lo", "hi")
}


def _numbers(value, skip=WORDING | ADDED):
    if isinstance(value, dict):
        return {k: _numbers(v, skip) for k, v in value.items() if k not in skip}
    if isinstance(value, list):
        return [_numbers(v, skip) for v in value if not (isinstance(v, dict) and v.get("finding") in REPLACED)]
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
    skip = WORDING | ADDED | (RECOMPUTED if command == "findings" else FRONTIER_CIS)
    assert _numbers(json.loads(out.stdout), skip) == _numbers(EXPECTED[command], skip)


def test_the_readme_and_docs_lab_tables_print_what_the_code_computes(lab_db):
    """One source of truth: the README's table of the pre-registered tests and docs/lab.md's
    current one print what lab.report.preregistered_tests computes on the committed lab (the
    Overview's table and bench/lab_targets.py print its rows too): status and estimate, to the digit."""
    from backend.analysis.findings_text import STATUS_WORDS, estimate_text
    from backend.lab.report import lab_manifest, preregistered_tests

    rows = {r["test"]: r for r in preregistered_tests(Store(lab_db).outcome_counts(SWEEP), lab_manifest())}
    root = Path(__file__).resolve().parents[2]
    readme = (root / "README.md").read_text().splitlines()
    for test in ("T1a", "T1b", "T2"):
        line = next(line for line in readme if line.startswith(f"| {test} "))
        assert line.endswith(f"| {STATUS_WORDS[rows[test]['status']]} | {estimate_text(rows[test])} |"), line
    kept = next(line for line in readme if line.startswith("| T1a / T1b, for comparison | kept |"))
    assert kept.endswith(f"| {estimate_text(rows['(T1a)'])} / {estimate_text(rows['(T1b)'])} |"), kept
    lab = (root / "docs" / "lab.md").read_text()
    current = lab.split("The same tests under today's code", 1)[1].split("\n\n", 2)[1]
    for line, row in zip(current.splitlines()[2:], rows.values(), strict=True):
        status = STATUS_WORDS.get(row["status"], row["status"])  # "trivially met" is T1c's own
        assert line.endswith(f"| {estimate_text(row)} |") and f"| {status}" in line, line
