"""Outcome classes against the table in docs/findings.md: the v4 → v5 migration recomputes every
stored (verdict, first failing tier) to the class the table gives, and the judge's rule agrees; and
no module but backend/outcomes.py spells a class as a string."""

import ast
import re
from pathlib import Path

import duckdb

from backend.outcomes import OUTCOME_CLASSES, OutcomeClass
from backend.outcomes import stored_outcome as outcome_of
from backend.records import Evaluation
from backend.store import SCHEMA_VERSION, Store
from tests.scan import offenders

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
    rows = [Evaluation("e", "c", f"p{i}", 0, outcome="correctness_failure", verdict=v, first_failing_tier=t)
            for i, (v, t) in enumerate(table)]  # fmt: skip
    rows.append(Evaluation("e", "c", "no-verdict", 0, outcome="correct"))  # nothing to recompute from: kept
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
    known = {*OUTCOME_CLASSES, OutcomeClass.SANDBOX_ERROR}
    migration = (ROOT / "db" / "migrations" / "005.sql").read_text()
    written = set(re.findall(r"THEN '(\w+)'", migration)) | set(re.findall(r"ELSE '(\w+)'", migration))
    assert written <= known and set(OUTCOME_CLASSES) <= written
    schema = (ROOT / "db" / "schema.sql").read_text()
    (comment,) = re.findall(r"outcome\s+VARCHAR NOT NULL,\s+-- ([\w |]+)", schema)
    assert {c.strip() for c in comment.split("|")} == set(OUTCOME_CLASSES)
    assert {outcome_of(v) for v in (None, "AC", "WA", "TLE", "MLE", "RE", "CE", "OLE", "SE", "FORMAT")} == known


HOME = "backend/outcomes.py"
CLASS_NAMES = tuple(c.value for c in OutcomeClass)


def class_spellings(tree: ast.Module, path: str = "") -> list[int]:
    """Lines of string constants (docstrings aside) that spell an outcome class: the whole string
    ("correct"), a quoted SQL literal ('correct'), or a class name with an underscore as a word."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or not isinstance(node.value, str) or id(node) in docstrings:
            continue
        text = node.value
        for name in CLASS_NAMES:
            spelled = text == name or f"'{name}'" in text or ("_" in name and re.search(rf"\b{name}\b", text))
            if spelled:
                found.append(node.lineno)
    return sorted(set(found))


def test_the_scan_finds_a_class_spelled_as_a_string():
    source = (
        'a = counts["correct"]\nb = "WHERE outcome = \'format_failure\'"\nc = f"{x}_lo"\n'
        'd = "recorded as optimization_failure"\ne = OutcomeClass.CORRECT\nf = "a correct program"\n'
        'def g():\n    """a correctness_failure, in prose"""\n'
    )
    assert class_spellings(ast.parse(source)) == [1, 2, 4]


def test_no_module_but_outcomes_spells_a_class():
    assert offenders(class_spellings, skip={HOME}) == {}
