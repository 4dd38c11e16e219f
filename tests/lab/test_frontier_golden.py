"""`analyze frontier` on the committed lab gives the numbers it gave before the outcome rule, the
launcher's messages and the α label were each given one home: the golden CSVs in tests/golden/ were
written by the tree before that change, from a fresh `lab import` of artifacts/lab, and rewritten on
purpose by findings v4 (2026-12-07), whose CIs over problems are Student's t widened for skewness
instead of the bootstrap's percentiles: only the `*_lo`/`*_hi` columns moved (every point value, class
and label compared equal to the previous goldens), and `sandbox_errors`, added since, is now in them.
A change that moves a verdict to another class, or a label, or a number, shows here as a differing cell."""

import csv
import io
import json
import shutil

import pytest

from backend.lab.artifacts import ARTIFACTS
from tests.conftest import ROOT, run_cli

GOLDEN = ROOT / "tests" / "golden"
CASES = {  # golden file -> the options it was written with
    "frontier-tier-default.csv": [],
    "frontier-tier-2.csv": ["--opt-min-tier", "2"],
    "frontier-tier-4.csv": ["--opt-min-tier", "4"],
    "frontier-per-sample.csv": ["--averaging", "per_sample"],
    "frontier-per-sample-tier-2.csv": ["--averaging", "per_sample", "--opt-min-tier", "2"],
}
# columns added on purpose since the goldens were written, with their value on the committed lab
ADDED: dict[str, str] = {}


@pytest.fixture(scope="module")
def lab_db(committed_lab_db, tmp_path_factory):
    """A fresh import of artifacts/lab (`lab import`'s import_results; the command itself is
    tests/lab/test_lab_build.py's), copied from the run's one import."""
    db = tmp_path_factory.mktemp("golden") / "lab.duckdb"
    shutil.copyfile(committed_lab_db, db)
    return db


@pytest.mark.slow
@pytest.mark.skipif(not (ARTIFACTS / "recipe.json").is_file(), reason="no committed lab artifacts")
@pytest.mark.parametrize("golden", sorted(CASES))
def test_frontier_on_the_committed_lab_is_unchanged(lab_db, golden):
    sweep = json.loads((ARTIFACTS / "recipe.json").read_text())["sweep_experiment"]
    result = run_cli("analyze", "frontier", "--experiment", sweep, "--db", str(lab_db), "--csv", *CASES[golden])
    assert result.returncode == 0, result.stderr[-2000:]
    got = list(csv.reader(io.StringIO(result.stdout)))
    want = list(csv.reader(io.StringIO((GOLDEN / golden).read_text())))
    assert [c for c in got[0] if c not in ADDED] == want[0]  # the columns, in order
    assert set(got[0]) - set(want[0]) == set(ADDED)
    assert len(got) == len(want) == 11  # ten sweep points and the header
    for got_row, want_row in zip(got[1:], want[1:], strict=True):
        assert dict(zip(got[0], got_row, strict=True)) == dict(zip(want[0], want_row, strict=True)) | ADDED
