"""The builtin set: size, balance, tiers, determinism, and calibration through the real judge."""

import collections

import pytest

from backend.problems.build import build_builtin, generate_inputs
from backend.problems.builtin import get, load_all
from backend.problems.calibrate import calibrate
from backend.records import Test

TOPICS = ("sorting", "prefix sums", "two pointers", "greedy", "dp", "graphs", "number theory", "strings", "geometry")


@pytest.fixture(scope="module")
def built():
    return build_builtin(None, progress=False)


def test_size_balance_and_topics(built):
    assert len(built) >= 40
    difficulty = collections.Counter(p.difficulty for p, _ in built)
    assert min(difficulty[d] for d in ("easy", "medium", "hard")) >= 13
    tags = {t for p, _ in built for t in p.tags}
    assert all(any(topic in t for t in tags) for topic in TOPICS), tags
    assert any(t in tags for t in ("stack", "deque", "fenwick tree", "union-find", "sparse table"))  # data structures
    for p in load_all():
        assert p.module.STATEMENT.strip() and p.module.BRUTE.strip() and p.module.BUGGY


def test_tiers_one_to_six_with_three_tests_where_the_format_allows(built):
    for problem, tests in built:
        tiers = collections.Counter(t.tier for t in tests)
        assert all(tiers[k] >= 3 for k in range(2, 7)), (problem.id, dict(tiers))
        assert [t.input_len for t in tests] == sorted(t.input_len for t in tests)
        assert all(isinstance(t, Test) and t.input_len == len(t.input) for t in tests)


def test_generation_is_deterministic_across_processes():
    """Another interpreter, with another hash seed, generates the same bytes (a cache built on one
    machine is valid on another): nothing depends on set order, id() or global random state."""
    import hashlib
    import subprocess
    import sys

    from tests.conftest import ROOT

    code = ("import hashlib, random; random.seed(12345); from backend.problems.builtin import get; "
            "from backend.problems.build import generate_inputs; "
            "print(hashlib.sha256(repr(generate_inputs(get('count-inversions'))).encode()).hexdigest())")  # fmt: skip
    digests = {subprocess.run([sys.executable, "-c", code], cwd=ROOT,
                              env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"},
                              capture_output=True, text=True, check=True).stdout.strip()
               for seed in ("1", "2")}  # fmt: skip
    here = hashlib.sha256(repr(generate_inputs(get("count-inversions"))).encode()).hexdigest()
    assert digests == {here}


@pytest.mark.slow
def test_calibration_holds_through_the_judge(built):
    reports = calibrate(built)
    failing = {r.problem_id: r.failures for r in reports if not r.ok}
    assert failing == {}
    assert len(reports) == len(built)


@pytest.mark.slow
def test_calibrate_cli_stores_and_reports(db_path):
    from tests.conftest import run_cli

    out = run_cli("problems", "calibrate", "--only", "max-subarray", "--db", str(db_path))
    assert out.returncode == 0, out.stderr
    assert "ok   builtin/max-subarray" in out.stdout
    from backend.records import Problem
    from backend.store import Store

    assert Store(db_path).get(Problem, "builtin/max-subarray").difficulty == "easy"
