"""One sample read closely: its verdict ladder, its first failing test, and its code against another's.

Pure functions over what the store holds (Evaluation.test_results), for the Problem page's
samples view.
"""

from __future__ import annotations

import difflib
import re

NOT_RUN = "not run"  # judging stops at the first failure; later tests have no verdict


def ladder(test_results: list[dict] | None) -> list[dict]:
    """The tests in ascending input length (the order they were judged in), each with its verdict
    or "not run"."""
    rows = [t for t in test_results or [] if "index" in t]
    rows.sort(key=lambda t: (t.get("input_len", 0), t["index"]))
    return [
        {
            "test": t["index"],
            "tier": t.get("tier"),
            "input length": t.get("input_len"),
            "verdict": t.get("verdict") or NOT_RUN,
            "CPU s": t.get("cpu_s") if t.get("verdict") else None,
            "memory MB": t.get("mem_mb") if t.get("verdict") else None,
        }
        for t in rows
    ]


def first_failure(test_results: list[dict] | None) -> dict | None:
    """The first test in ascending input length whose verdict is not AC (None when all passed or
    nothing ran)."""
    for t in sorted((t for t in test_results or [] if "index" in t), key=lambda t: (t.get("input_len", 0), t["index"])):
        if t.get("verdict") and t["verdict"] != "AC":
            return t
    return None


def first_failure_line(test_results: list[dict] | None, time_limit_s: float) -> str:
    """One line that answers "which test failed first?"."""
    t = first_failure(test_results)
    if t is None:
        ran = [r for r in test_results or [] if r.get("verdict")]
        return f"passed all {len(ran)} tests" if ran else "no test ran"
    return (
        f"first failing test: #{t['index']} (tier {t.get('tier')}, input length {t.get('input_len')}) — "
        f"{t['verdict']}, CPU {t.get('cpu_s') or 0:.3f} s of {time_limit_s:g} s"
    )


def format_reason(test_results: list[dict] | None) -> str | None:
    for t in test_results or []:
        if "format_reason" in t:
            return t["format_reason"]
    return None


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
