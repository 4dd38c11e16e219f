"""The outcome rule, written once: every verdict the judge emits or the database stores, the four outcome
classes (docs/method.md) and the sandbox error that is in none, which class each verdict is, and the
tiny-input rule (`opt_min_tier`).

It is applied twice and nowhere else: the judge stores each sample's class (`stored_outcome`), and
every count the analysis makes is the store's SQL generated here (`counted_in_sql`, with the
tiny-input rule: backend/store_queries.py's outcome_counts, read by analysis/frame.py), so no other
module spells a class or re-states the rule (tests/test_outcome_classes.py scans for it). `classify`
is the rule in Python, which tests/test_outcome_rule.py holds the generated SQL to on every
verdict x tier x opt_min_tier. db/migrations/005.sql, which classified the rows stored before v5, is
checked against the same rule.
"""

from __future__ import annotations

from enum import StrEnum


class Verdict(StrEnum):
    """A program's verdict on one test, or on the sample when no test ran (FORMAT, CE)."""

    AC = "AC"  # accepted
    WA = "WA"  # wrong answer
    TLE = "TLE"  # over the CPU time limit
    MLE = "MLE"  # over the memory limit
    RE = "RE"  # crashed (non-zero exit or signal)
    CE = "CE"  # does not parse or compile
    OLE = "OLE"  # over the output limit
    SE = "SE"  # the sandbox failed, not the program
    FORMAT = "FORMAT"  # no program extracted from the completion (none, or cut by truncation)


class OutcomeClass(StrEnum):
    """A judged sample's stored outcome: one of the four classes, or SANDBOX_ERROR."""

    CORRECT = "correct"
    OPTIMIZATION_FAILURE = "optimization_failure"
    CORRECTNESS_FAILURE = "correctness_failure"
    FORMAT_FAILURE = "format_failure"
    SANDBOX_ERROR = "sandbox_error"  # the sandbox failed, not the program: stored, counted in no class


OUTCOME_CLASSES: tuple[str, ...] = tuple(c.value for c in OutcomeClass if c is not OutcomeClass.SANDBOX_ERROR)
VERDICTS: tuple[str, ...] = tuple(v.value for v in Verdict)

# The first failing test in ascending input length decides. CE stays its own verdict so the dashboard can
# show the compiler's message, but it is a format failure: docs/method.md's "no runnable program" class.
VERDICT_OUTCOME: dict[Verdict, OutcomeClass] = {
    Verdict.AC: OutcomeClass.CORRECT,
    Verdict.FORMAT: OutcomeClass.FORMAT_FAILURE,
    Verdict.CE: OutcomeClass.FORMAT_FAILURE,
    Verdict.TLE: OutcomeClass.OPTIMIZATION_FAILURE,
    Verdict.MLE: OutcomeClass.OPTIMIZATION_FAILURE,
    Verdict.SE: OutcomeClass.SANDBOX_ERROR,
    Verdict.WA: OutcomeClass.CORRECTNESS_FAILURE,
    Verdict.RE: OutcomeClass.CORRECTNESS_FAILURE,
    Verdict.OLE: OutcomeClass.CORRECTNESS_FAILURE,
}
OPTIMIZATION = frozenset(v for v, c in VERDICT_OUTCOME.items() if c == OutcomeClass.OPTIMIZATION_FAILURE)
FORMAT = frozenset(v for v, c in VERDICT_OUTCOME.items() if c == OutcomeClass.FORMAT_FAILURE)
# The tiny-input rule: a time or memory failure first failing below tier opt_min_tier counts as a
# correctness failure (a program too slow on a tiny input is stuck, not inefficient at scale).
TINY_FROM, TINY_TO = OutcomeClass.OPTIMIZATION_FAILURE, OutcomeClass.CORRECTNESS_FAILURE


def stored_outcome(first_failing_verdict: str | None) -> OutcomeClass:
    """The class the judge stores: no failing test (None) or AC is correct; an unknown verdict raises."""
    if first_failing_verdict is None:
        return OutcomeClass.CORRECT
    try:
        return VERDICT_OUTCOME[Verdict(first_failing_verdict)]
    except ValueError:
        raise ValueError(
            f"unknown verdict {first_failing_verdict!r}; backend/outcomes.py's Verdict lists them"
        ) from None


def is_tiny(outcome: str, first_failing_tier: int | None, opt_min_tier: int | None) -> bool:
    return outcome == TINY_FROM and first_failing_tier is not None and first_failing_tier < (opt_min_tier or 0)


def counted_as(outcome: str, first_failing_tier: int | None, opt_min_tier: int | None) -> OutcomeClass:
    """The class a stored outcome counts in under opt_min_tier."""
    return TINY_TO if is_tiny(outcome, first_failing_tier, opt_min_tier) else OutcomeClass(outcome)


def classify(
    verdict: str | None, first_failing_tier: int | None = None, opt_min_tier: int | None = None
) -> OutcomeClass:
    """The outcome rule: one of OUTCOME_CLASSES, or SANDBOX_ERROR (counted in none)."""
    return counted_as(stored_outcome(verdict), first_failing_tier, opt_min_tier)


def _sql_list(values) -> str:
    return ", ".join(f"'{v}'" for v in values)


def stored_outcome_sql(verdict: str = "verdict") -> str:
    """`stored_outcome` as a DuckDB CASE over a verdict column (NULL: no failing test, correct)."""
    groups: dict[str, list[str]] = {}
    for v, c in VERDICT_OUTCOME.items():
        groups.setdefault(c.value, []).append(v.value)
    whens = [f"WHEN {verdict} IS NULL THEN '{OutcomeClass.CORRECT}'"]
    whens += [f"WHEN {verdict} IN ({_sql_list(vs)}) THEN '{c}'" for c, vs in groups.items()]
    return f"CASE {' '.join(whens)} END"  # an unknown verdict gives NULL, which no outcome column accepts


def tiny_sql(outcome: str, tier: str, opt_min_tier: int | None) -> str:
    """`is_tiny` as a DuckDB condition; NULL where the tier is NULL (callers coalesce)."""
    return f"{outcome} = '{TINY_FROM}' AND {tier} < {int(opt_min_tier or 0)}"


def counted_in_sql(cls: str, outcome: str = "e.outcome", tier: str = "e.first_failing_tier", opt_min_tier=None) -> str:
    """The DuckDB condition that a stored (outcome, first failing tier) counts in class `cls` under
    opt_min_tier: `counted_as(...) == cls`, written as FILTER terms the store can count by."""
    tiny = f"coalesce({tiny_sql(outcome, tier, opt_min_tier)}, false)"
    if cls == TINY_FROM:
        return f"{outcome} = '{cls}' AND NOT {tiny}"
    if cls == TINY_TO:
        return f"({outcome} = '{cls}' OR {tiny})"
    return f"{outcome} = '{cls}'"


def classify_sql(verdict: str = "verdict", tier: str = "first_failing_tier", opt_min_tier: int | None = None) -> str:
    """`classify` as one DuckDB expression over (verdict, first failing tier) columns."""
    stored = stored_outcome_sql(verdict)
    tiny = tiny_sql(f"({stored})", tier, opt_min_tier)
    return f"CASE WHEN coalesce({tiny}, false) THEN '{TINY_TO}' ELSE {stored} END"
