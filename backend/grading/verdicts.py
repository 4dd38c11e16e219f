"""Per-test results and the nested-coverage rewards computed from them (docs/method.md).

Pure functions over per-test results; the judge produces those results, RL and analysis read
these numbers. Which verdict is which outcome class is backend/outcomes.py's rule, named here too
(`outcome_of`, FORMAT, OPTIMIZATION) for the modules that import it from grading.
"""

from __future__ import annotations

from dataclasses import fields

from backend.outcomes import FORMAT, OPTIMIZATION  # noqa: F401  (the rule: backend/outcomes.py)
from backend.outcomes import stored_outcome as outcome_of  # noqa: F401  (the judge's name for it)
from backend.records import Rewards, TestResult

MAX_TIER = 6  # R_1..R_6; R_inf covers every test, whatever its length
REWARD_NAMES = tuple(f.name for f in fields(Rewards))


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
