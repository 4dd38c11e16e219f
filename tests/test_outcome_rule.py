"""The outcome rule of backend/outcomes.py against a hand table (docs/findings.md's verdict table and
docs/cli.md's tiny-input rule), evaluated three ways on every verdict x first failing tier x opt_min_tier:
in Python (`classify`), as the generated SQL in DuckDB (`classify_sql`), and through the store's real
`outcome_counts` over a real DuckDB file. The frozen migration 005.sql is held to the same table."""

import itertools
import re

import duckdb
import pytest

from backend.grading.judge import format_failure
from backend.outcomes import (
    OUTCOME_CLASSES,
    VERDICTS,
    OutcomeClass,
    Verdict,
    classify,
    classify_sql,
    counted_in_sql,
    stored_outcome,
    stored_outcome_sql,
)
from backend.records import Evaluation
from backend.store_queries import SampleFilter
from tests.conftest import ROOT
from tests.test_outcome_classes import documented_classes

TIERS = (None, 1, 2, 3, 4, 5, 6, 7)
OPT_MIN_TIERS = (None, 1, 2, 3, 4, 5, 6, 7)
CASES = list(itertools.product((None, *VERDICTS), TIERS, OPT_MIN_TIERS))


def scalar(expression: str):
    with duckdb.connect() as con:
        return con.execute(f"SELECT {expression}").fetchone()[0]


def by_hand(verdict: str | None, tier: int | None, opt_min_tier: int | None) -> str:
    """docs/findings.md's table; then docs/cli.md's --opt-min-tier: a TLE or MLE first failing at a tier
    below T counts as a correctness failure (no tier known: not below anything)."""
    table = {v: cls for (v, _), cls in documented_classes().items()}
    cls = "correct" if verdict is None else table[verdict]
    if cls == "optimization_failure" and tier is not None and opt_min_tier is not None and tier < opt_min_tier:
        return "correctness_failure"
    return cls


def test_every_documented_and_emitted_verdict_is_a_member():
    documented = {v for v, _ in documented_classes()}
    assert documented == set(VERDICTS) == {v.value for v in Verdict}
    assert format_failure("no code block").verdict == Verdict.FORMAT  # the judge's own FORMAT result
    assert {stored_outcome(v) for v in VERDICTS} == {*OUTCOME_CLASSES, OutcomeClass.SANDBOX_ERROR}
    assert OUTCOME_CLASSES == ("correct", "optimization_failure", "correctness_failure", "format_failure")
    assert [c.value for c in OutcomeClass] == [*OUTCOME_CLASSES, "sandbox_error"]  # stored, counted in none


def test_an_unknown_verdict_is_refused_not_counted_as_some_class():
    with pytest.raises(ValueError, match="unknown verdict 'XX'"):
        classify("XX")
    assert scalar(stored_outcome_sql("'XX'")) is None  # NOT NULL column refuses it


def test_python_rule_is_the_hand_table():
    wrong = [(v, t, o) for v, t, o in CASES if classify(v, t, o) != by_hand(v, t, o)]
    assert not wrong, wrong[:5]
    assert classify("TLE", 1, 2) == "correctness_failure" and classify("TLE", 2, 2) == "optimization_failure"


@pytest.mark.parametrize("opt_min_tier", OPT_MIN_TIERS)
def test_generated_sql_classifies_as_python_does(opt_min_tier):
    con = duckdb.connect()
    con.execute("CREATE TABLE t (verdict VARCHAR, first_failing_tier INTEGER)")
    rows = [(v, t) for v, t, o in CASES if o == opt_min_tier]
    con.executemany("INSERT INTO t VALUES (?, ?)", rows)
    got = con.execute(
        f"SELECT verdict, first_failing_tier, {classify_sql(opt_min_tier=opt_min_tier)} FROM t"
    ).fetchall()
    assert len(got) == len(rows) == 10 * len(TIERS)
    assert {(v, t): cls for v, t, cls in got} == {(v, t): by_hand(v, t, opt_min_tier) for v, t in rows}
    # the store's per-class FILTER terms: each stored (outcome, tier) counts in exactly the class classify gives
    stored = f"{stored_outcome_sql()} AS outcome"
    terms = ", ".join(
        f"{counted_in_sql(c, 'outcome', 'first_failing_tier', opt_min_tier)} AS {c}" for c in OUTCOME_CLASSES
    )
    counted = con.execute(f"SELECT verdict, first_failing_tier, {terms} FROM (SELECT *, {stored} FROM t)").fetchall()
    for v, t, *flags in counted:
        expect = by_hand(v, t, opt_min_tier)
        assert [c for c, on in zip(OUTCOME_CLASSES, flags, strict=True) if on] == (
            [] if expect == OutcomeClass.SANDBOX_ERROR else [expect]
        )


def test_store_outcome_counts_follow_the_rule_on_a_real_database(store):
    """One evaluation per (verdict, tier), stored as the judge stores it; outcome_counts under each
    opt_min_tier counts every one in the class of the hand table (sandbox errors in none, not in n)."""
    keys = [(v, t) for v, t in itertools.product(VERDICTS, TIERS)]
    store.put([Evaluation("e", "c", f"p{i}", 0, outcome=stored_outcome(v), verdict=v, first_failing_tier=t)
               for i, (v, t) in enumerate(keys)])  # fmt: skip
    for opt_min_tier in OPT_MIN_TIERS:
        frame = store.outcome_counts("e", SampleFilter(opt_min_tier=opt_min_tier))
        got = {r["problem_id"]: [c for c in OUTCOME_CLASSES if r[c]] for r in frame.iter_rows(named=True)}
        want = {f"p{i}": [by_hand(v, t, opt_min_tier)] for i, (v, t) in enumerate(keys) if v != "SE"}
        assert got == want
        assert frame["n"].sum() == len(want) == len(keys) - len(TIERS)


def test_the_frozen_005_migration_classifies_as_the_rule():
    """005.sql reclassified the rows stored before v5 and has run on users' databases, so its text stays;
    a rule that no longer matches it needs a migration that reclassifies stored rows again."""
    migration = (ROOT / "db" / "migrations" / "005.sql").read_text()
    (case,) = re.findall(r"SET outcome = (CASE.*?END)", migration, re.S)
    for v in VERDICTS:
        assert scalar(case.replace("verdict", f"'{v}'")) == stored_outcome(v)
        assert scalar(stored_outcome_sql(f"'{v}'")) == stored_outcome(v)
