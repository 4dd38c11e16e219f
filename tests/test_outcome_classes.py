"""Outcome classes against the table in docs/findings.md: the v4 → v5 migration recomputes every
stored (verdict, first failing tier) to the class the table gives, and the judge's rule agrees."""

import re
from pathlib import Path

import duckdb

from backend.grading.verdicts import outcome_of
from backend.records import Evaluation
from backend.store import SCHEMA_VERSION, Store

ROOT = Path(__file__).resolve().parents[1]


def documented_classes() -> dict[tuple[str, int | None], str]:
    """{(verdict, tier): class} from the docs table: | `CE` | 1–6 | `format_failure` |."""
    text = (ROOT / "docs" / "findings.md").read_text()
    rows = re.findall(r"^\| `(\w+)` \| (none|1–6) \| `(\w+)` \|", text, re.M)
    assert len(rows) >= 9, rows
    table = {}
    for verdict, tiers, cls in rows:
        for tier in [None] if tiers == "none" else range(1, 7):
            table[(verdict, tier)] = cls
    return table


def test_migration_recomputes_every_stored_class_as_the_docs_table_says(db_path):
    table = documented_classes()
    store = Store(db_path)
    rows = [Evaluation("e", "c", f"p{i}", 0, "correctness_failure", verdict=v, first_failing_tier=t)
            for i, (v, t) in enumerate(table)]  # fmt: skip
    rows.append(Evaluation("e", "c", "no-verdict", 0, "correct"))  # nothing to recompute from: kept
    store.put(rows)
    with duckdb.connect(str(db_path)) as con:  # back to v4, every class as an older frontier-lab left it
        con.execute("UPDATE schema_meta SET value = '4' WHERE key = 'version'")
    assert Store(db_path, migrate=False).schema_version() == 4
    store = Store(db_path)
    assert store.schema_version() == SCHEMA_VERSION
    got = {(e.verdict, e.first_failing_tier): e.outcome for e in store.select(Evaluation) if e.verdict}
    assert got == table
    assert store.get(Evaluation, "e", "c", "no-verdict", 0).outcome == "correct"


def test_the_judge_rule_is_the_docs_table():
    for (verdict, _), cls in documented_classes().items():
        assert outcome_of(None if verdict == "AC" else verdict) == cls
        assert outcome_of(verdict) == cls


def test_sql_names_only_the_classes_python_declares():
    """The classes are declared once (backend/outcomes.py); every class the migrations, the schema's
    comment and the judge write is one of them, and 005.sql's table reaches every one."""
    from backend.vocab import OUTCOME_CLASSES, SANDBOX_ERROR

    known = {*OUTCOME_CLASSES, SANDBOX_ERROR}
    migration = (ROOT / "db" / "migrations" / "005.sql").read_text()
    written = set(re.findall(r"THEN '(\w+)'", migration)) | set(re.findall(r"ELSE '(\w+)'", migration))
    assert written <= known and set(OUTCOME_CLASSES) <= written
    schema = (ROOT / "db" / "schema.sql").read_text()
    (comment,) = re.findall(r"outcome\s+VARCHAR NOT NULL,\s+-- ([\w |]+)", schema)
    assert {c.strip() for c in comment.split("|")} == set(OUTCOME_CLASSES)
    assert {outcome_of(v) for v in (None, "AC", "WA", "TLE", "MLE", "RE", "CE", "OLE", "SE", "FORMAT")} == known
