"""The samples view's reading of one sample, and the churn page's list of problems that flip
(values written by hand from the rules: ascending input length, solved = pass rate ≥ 50 %)."""

import numpy as np

from backend.analysis.churn import flipping_problems
from backend.analysis.frame import Outcomes
from backend.analysis.samples import code_diff, first_failure, first_failure_line, ladder, prose
from backend.records import TestResult

RESULTS = [
    TestResult(index=2, input_len=900, tier=3, verdict=None),
    TestResult(index=0, input_len=3, tier=1, verdict="AC", cpu_s=0.01, mem_mb=9.0),
    TestResult(index=1, input_len=50, tier=2, verdict="TLE", cpu_s=2.104, mem_mb=9.0, detail="killed at 2 s"),
]


def test_ladder_in_ascending_input_length_with_unrun_tests_named():
    rows = ladder(RESULTS)
    assert [(r["test"], r["input length"], r["verdict"]) for r in rows] == [
        (0, 3, "AC"),
        (1, 50, "TLE"),
        (2, 900, "not run"),
    ]
    assert rows[2]["CPU s"] is None  # no time for a test that never ran
    assert first_failure(RESULTS).detail == "killed at 2 s"


def test_first_failing_test_line():
    assert (
        first_failure_line(RESULTS, 2.0) == "first failing test: #1 (tier 2, input length 50) — TLE, CPU 2.104 s of 2 s"
    )
    assert first_failure_line(RESULTS[1:2], 2.0) == "passed all 1 tests"
    assert first_failure_line([], 2.0) == "no test ran"


def test_diff_and_prose():
    assert code_diff("a\nb\n", "a\nc\n", "left", "right").splitlines() == [
        "--- left",
        "+++ right",
        "@@ -1,2 +1,2 @@",
        " a",
        "-b",
        "+c",
    ]
    assert code_diff("x", "x", "l", "r") == ""
    assert prose("Think.\n```python\nprint(1)\n```\nDone.") == "Think.\n[code shown above]\nDone."


def test_flipping_problems():
    n = np.full((3, 5), 4)
    correct = np.array([[4, 4, 0, 0, 4], [0, 0, 0, 0, 0], [0, 4, 4, 4, 0]])
    alphas = [1.0, -1.0, 0.0, 0.5, 2.0]  # checkpoints not in α order: the list sorts them
    o = Outcomes(["a", "b", "c"], ["A", "B", "C"], ["easy", "hard", "easy"], list("vwxyz"), list("vwxyz"), alphas,
                 ["merged"] * 5, n, {"correct": correct, "optimization_failure": n - correct,
                                     "correctness_failure": 0 * n, "format_failure": 0 * n})  # fmt: skip
    rows = flipping_problems(o)
    # a along α (-1, 0, 0.5, 1, 2): solved, no, no, solved, solved; b never solved; c: yes, yes, yes, no, no
    assert [(r["problem_id"], r["flips"], r["solved at α"]) for r in rows] == [
        ("a", 2, "-1, 1 … 2"),
        ("c", 1, "-1 … 0.5"),
    ]
    assert (rows[0]["alpha_solved"], rows[0]["alpha_unsolved"]) == (-1.0, 0.0)
    assert (rows[1]["alpha_solved"], rows[1]["alpha_unsolved"]) == (0.5, 1.0)
