"""One sample read closely: its verdict ladder, its first failing test, and its code against another's.

Pure functions over what the store holds (Evaluation.test_results, typed TestResult rows), for the
Problem page's samples view.
"""

from __future__ import annotations

import difflib
import re

from backend.records import TestResult

NOT_RUN = "not run"  # judging stops at the first failure; later tests have no verdict


def _judging_order(test_results: list[TestResult] | None) -> list[TestResult]:
    return sorted(test_results or [], key=lambda t: (t.input_len or 0, t.index))


def ladder(test_results: list[TestResult] | None) -> list[dict]:
    """The tests in ascending input length (the order they were judged in), each with its verdict
    or "not run"."""
    return [
        {
            "test": t.index,
            "tier": t.tier,
            "input length": t.input_len,
            "verdict": t.verdict or NOT_RUN,
            "CPU s": t.cpu_s if t.verdict else None,
            "memory MB": t.mem_mb if t.verdict else None,
        }
        for t in _judging_order(test_results)
    ]


def first_failure(test_results: list[TestResult] | None) -> TestResult | None:
    """The first test in ascending input length whose verdict is not AC (None when all passed or
    nothing ran)."""
    return next((t for t in _judging_order(test_results) if t.verdict and t.verdict != "AC"), None)


def first_failure_line(test_results: list[TestResult] | None, time_limit_s: float) -> str:
    """One line that answers "which test failed first?"."""
    t = first_failure(test_results)
    if t is None:
        ran = [r for r in test_results or [] if r.verdict]
        return f"passed all {len(ran)} tests" if ran else "no test ran"
    return (
        f"first failing test: #{t.index} (tier {t.tier}, input length {t.input_len}) — "
        f"{t.verdict}, CPU {t.cpu_s or 0:.3f} s of {time_limit_s:g} s"
    )


FENCED = re.compile(r"```[^\n]*\n.*?(```|$)", re.S)


def prose(completion: str | None) -> str:
    """What the model wrote around its code (reasoning), with the fenced code left out: the code is
    shown highlighted on its own."""
    return FENCED.sub("[code shown above]", completion or "").strip()


def code_diff(left: str | None, right: str | None, left_name: str, right_name: str) -> str:
    """A unified diff of two programs ("" when they are the same)."""
    lines = difflib.unified_diff(
        (left or "").splitlines(), (right or "").splitlines(), fromfile=left_name, tofile=right_name, lineterm=""
    )
    return "\n".join(lines)
