"""Verdicts, outcome classes (docs/method.md), nested-coverage rewards and failure context.

Pure functions over per-test results; the judge produces those results, RL and analysis read
these numbers.
"""

from __future__ import annotations

from dataclasses import fields

from backend.records import Rewards, TestResult
from backend.vocab import Verdict

OPTIMIZATION: set[Verdict] = {"TLE", "MLE"}
# No runnable program: nothing extracted (FORMAT: no code block, or one left open by truncation) or
# a program that does not parse or compile (CE). docs/method.md's "unparsable output" class; the verdict
# stays CE so the dashboard can still show the compiler's message.
FORMAT: set[str] = {"FORMAT", "CE"}
# Every other failing verdict but SE (WA, RE, OLE) is a correctness failure: a runnable program
# that answers wrongly or crashes within the limits.
MAX_TIER = 6  # R_1..R_6; R_inf covers every test, whatever its length
REWARD_NAMES = tuple(f.name for f in fields(Rewards))


def outcome_of(first_failing_verdict: str | None) -> str:
    """The first failing test in ascending input length decides (docs/method.md). db/migrations/005.sql
    applies the same table to stored verdicts; docs/findings.md prints it."""
    if first_failing_verdict in (None, "AC"):
        return "correct"
    if first_failing_verdict in FORMAT:
        return "format_failure"
    if first_failing_verdict in OPTIMIZATION:
        return "optimization_failure"
    if first_failing_verdict == "SE":
        return "sandbox_error"  # never counted as the program's fault
    return "correctness_failure"


def rewards(results: list[TestResult]) -> Rewards:
    """R_k = 1 iff every test with input_len < 10^k passed; tests not run count as not passed.

    With stop-at-first judging in ascending length, R_k is exact anyway: every test shorter than
    the first failure was run. Partial credit is exact only with run_all.
    """
    passed = [r.verdict == "AC" for r in results]
    out: dict[str, float] = {}
    for k in range(1, MAX_TIER + 1):
        out[f"R_{k}"] = float(all(p for r, p in zip(results, passed, strict=True) if r.input_len < 10**k))
    out["R_inf"] = float(all(passed))
    tiers = sorted({r.tier for r in results})
    full = [t for t in tiers if all(p for r, p in zip(results, passed, strict=True) if r.tier == t)]
    out["partial_discrete"] = len(full) / len(tiers) if tiers else 0.0
    out["partial_continuous"] = sum(passed) / len(passed) if passed else 0.0
    return Rewards(**out)


def zero_rewards() -> Rewards:
    return Rewards(**dict.fromkeys(REWARD_NAMES, 0.0))


def reward_value(reward: Rewards, name: str) -> float:
    """One reward by its name in REWARD_NAMES (R_3, R_inf, partial_discrete, ...)."""
    if name not in REWARD_NAMES:
        raise ValueError(f"no reward {name!r}; rewards: {', '.join(REWARD_NAMES)}")
    return getattr(reward, name)


def highest_tier_passed(reward: Rewards) -> int:
    return max((k for k in range(1, MAX_TIER + 1) if reward_value(reward, f"R_{k}") == 1.0), default=0)


def short_diff(expected: str, got: str, limit: int = 300) -> str:
    """The first differing line of expected vs got, each side truncated: enough for a repair prompt."""
    exp_lines, got_lines = expected.splitlines(), got.splitlines()
    for i in range(max(len(exp_lines), len(got_lines))):
        e = exp_lines[i] if i < len(exp_lines) else "<missing>"
        g = got_lines[i] if i < len(got_lines) else "<missing>"
        if e.split() != g.split():
            half = limit // 2
            return f"line {i + 1}: expected {e[:half]!r}, got {g[:half]!r}"
    return ""
