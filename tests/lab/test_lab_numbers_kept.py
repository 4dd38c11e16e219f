"""The committed lab's numbers do not move when the code under them is reshaped: `analyze frontier`
(with and without the tiny-input tier rule) and `analyze findings` on a fresh import of
artifacts/lab give what frontier-lab gave at 68dfd60, before its evaluations were typed
(tests/fixtures/lab_numbers.json, written by that commit's CLI from the same artifacts). Wording
(labels, criteria, names) may change; every number, class, status and point kind must not."""

import json
from pathlib import Path

import pytest

from backend.lab.artifacts import import_results
from backend.store import Store
from tests.conftest import run_cli

EXPECTED = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "lab_numbers.json").read_text())
SWEEP = "sweep-20261205-014312-531889"  # the committed lab's sweep
WORDING = {"label", "criterion", "name"}


def _numbers(value):
    if isinstance(value, dict):
        return {k: _numbers(v) for k, v in value.items() if k not in WORDING}
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    return value


@pytest.fixture(scope="module")
def lab_db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("lab") / "lab.duckdb"
    import_results(Store(path))
    return path


@pytest.mark.parametrize("command", sorted(EXPECTED))
def test_the_committed_labs_numbers_are_unchanged(lab_db, command):
    out = run_cli("analyze", *command.split(), "--experiment", SWEEP, "--json", "--db", str(lab_db))
    assert out.returncode == 0, out.stderr
    assert _numbers(json.loads(out.stdout)) == _numbers(EXPECTED[command])
