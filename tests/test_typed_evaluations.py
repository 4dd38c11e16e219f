"""An evaluation's rewards and per-test results are typed columns (v7): what the judge returns is
what the store gives back, verdicts and classes as their enumerations; a v6 file, and Parquet a v6
frontier-lab exported (the committed lab), read as the same values they held as JSON text."""

import json
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

from backend.grading.judge import format_failure
from backend.lab.artifacts import ARTIFACTS
from backend.outcomes import OutcomeClass, Verdict
from backend.records import Evaluation, Judgement, Rewards, SampleKey, TestResult, rewards
from backend.store import SCHEMA_VERSION, Store

MIGRATIONS = Path(__file__).resolve().parents[1] / "db" / "migrations"
V6_COLUMNS = ("experiment_id, checkpoint_id, problem_id, sample_idx, outcome, verdict, first_failing_test, "
              "first_failing_tier, highest_tier_passed, cpu_s, mem_mb, accounting, rewards, test_results")  # fmt: skip

# Rows as the v6 pipeline stored them: rewards a JSON object, the per-test results a JSON list of
# TestResult.to_dict() with the detail, and a format failure's reason appended as its own element.
TLE_TESTS = [
    {"index": 0, "input_len": 12, "tier": 2, "verdict": "AC", "cpu_s": 0.001735759, "wall_s": 0.007986591997905634,
     "mem_mb": 0.74609375, "detail": ""},
    {"index": 1, "input_len": 12884, "tier": 5, "verdict": "TLE", "cpu_s": 2.071095501, "wall_s": 6.1454950049992476,
     "mem_mb": 0.984375, "detail": 'Traceback (most recent call last):\n  File "main.py", line 3\n"é" ✓'},
    {"index": 2, "input_len": 53884, "tier": 5, "verdict": None, "cpu_s": 0.0, "wall_s": 0.0, "mem_mb": 0.0,
     "detail": ""},
]  # fmt: skip
TLE_REWARDS = {"R_1": 1.0, "R_2": 1.0, "R_3": 1.0, "R_4": 1.0, "R_5": 0.0, "R_6": 0.0, "R_inf": 0.0,
               "partial_discrete": 0.5, "partial_continuous": 1 / 3}  # fmt: skip
ZERO = dict.fromkeys(TLE_REWARDS, 0.0)
V6_ROWS = [
    ("sweep-b", "merged-1", "lab/p", 0, "optimization_failure", "TLE", 1, 5, 4, 2.071095501, 0.984375, "cgroup-v1",
     json.dumps(TLE_REWARDS), json.dumps(TLE_TESTS)),
    ("sweep-a", "merged-1", "lab/p", 1, "format_failure", "FORMAT", None, None, 0, 0.0, 0.0, None,
     json.dumps(ZERO), json.dumps([{"format_reason": "no fenced code block in the answer"}])),
    ("sweep-a", "merged-1", "lab/p", 2, "correct", None, None, None, None, None, None, None, None, None),
]  # fmt: skip


def _v6_file(path: Path) -> None:
    """A v6 database built by the old migrations' own SQL (005 makes the evaluations table, 006
    rewrites it as v6 has it), holding V6_ROWS."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE schema_meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL)")
    con.execute("INSERT INTO schema_meta VALUES ('version', '6')")
    for step in ("005.sql", "006.sql"):
        con.execute((MIGRATIONS / step).read_text())
    marks = ", ".join("?" for _ in V6_ROWS[0])
    con.executemany(f"INSERT INTO evaluations ({V6_COLUMNS}) VALUES ({marks})", V6_ROWS)
    con.execute("UPDATE evaluations SET experiment_key = md5_number_lower(experiment_id)")
    con.close()


def test_a_judged_sample_is_stored_and_read_back_typed(store):
    tests = [
        TestResult(0, 3, 1, Verdict.AC, 0.01, 0.02, 9.0, "ok " * 100),
        TestResult(1, 40, 2, Verdict.WA, 0.02, 0.03, 9.5, "x" * 900),
        TestResult(2, 500, 3, None),
    ]
    wrong = Judgement(outcome=OutcomeClass.CORRECTNESS_FAILURE, verdict=Verdict.WA, first_failing_test=1,
                      first_failing_tier=2, highest_tier_passed=1, cpu_s=0.02, mem_mb=9.5, accounting="cgroup-v1",
                      rewards=rewards(tests), test_results=tests)  # fmt: skip
    filed = [
        Evaluation.of("e", SampleKey("c", "p", 0), wrong),
        Evaluation.of("e", SampleKey("c", "p", 1), format_failure("no code")),
    ]
    store.put(filed)
    assert store.select(Evaluation) == filed  # every field as the judge gave it, and nothing else
    judged, unformatted = store.select(Evaluation)
    assert (judged.experiment_id, judged.checkpoint_id, judged.problem_id, judged.sample_idx) == ("e", "c", "p", 0)
    assert judged.rewards == Rewards(1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1 / 3, 1 / 3)
    assert [t.detail for t in judged.test_results] == ["ok " * 100, "x" * 900, ""]
    assert [(t.index, t.input_len, t.tier, t.verdict, t.cpu_s, t.mem_mb) for t in judged.test_results] == [
        (0, 3, 1, "AC", 0.01, 9.0), (1, 40, 2, "WA", 0.02, 9.5), (2, 500, 3, None, 0.0, 0.0)
    ]  # fmt: skip
    read = [judged.outcome, judged.verdict, judged.test_results[1].verdict, unformatted.outcome, unformatted.verdict]
    assert [type(v) for v in read] == [OutcomeClass, Verdict, Verdict, OutcomeClass, Verdict]  # members, not text
    assert (unformatted.verdict, unformatted.format_reason, unformatted.test_results) == ("FORMAT", "no code", [])
    with store.connect(read_only=True) as con:
        types = dict(con.execute("SELECT column_name, data_type FROM information_schema.columns "
                                 "WHERE table_name = 'evaluations'").fetchall())  # fmt: skip
        by_name = con.execute("SELECT rewards.R_1, rewards.partial_continuous, test_results[2].verdict, format_reason "
                              "FROM evaluations ORDER BY sample_idx").fetchall()  # fmt: skip
    assert types["rewards"].startswith("STRUCT(R_1 DOUBLE") and types["format_reason"] == "VARCHAR"
    assert types["test_results"].startswith('STRUCT("index" INTEGER') and types["test_results"].endswith("[]")
    assert by_name == [(1.0, 1 / 3, "WA", None), (0.0, 0.0, None, "no code")]


def test_a_v6_file_migrates_with_every_value_kept(db_path):
    _v6_file(db_path)
    store = Store(db_path)
    assert store.schema_version() == SCHEMA_VERSION == 7
    got = {e.sample_idx: e for e in store.select(Evaluation)}
    tle, unformatted, bare = got[0], got[1], got[2]
    assert tle.rewards == Rewards(**TLE_REWARDS) and tle.format_reason is None
    assert tle.test_results == [TestResult(**t) for t in TLE_TESTS]  # floats to the last bit, the detail's text
    assert (tle.outcome, tle.verdict, tle.first_failing_test, tle.first_failing_tier, tle.highest_tier_passed,
            tle.cpu_s, tle.mem_mb, tle.accounting) == V6_ROWS[0][4:12]  # fmt: skip
    assert (unformatted.rewards, unformatted.test_results) == (Rewards(**ZERO), [])
    assert unformatted.format_reason == "no fenced code block in the answer"
    assert (bare.outcome, bare.rewards, bare.test_results, bare.format_reason) == ("correct", None, None, None)
    with store.connect(read_only=True) as con:
        rows = con.execute(
            "SELECT experiment_id, experiment_key = md5_number_lower(experiment_id) FROM evaluations"
        ).fetchall()
    assert rows == [("sweep-a", True), ("sweep-a", True), ("sweep-b", True)]  # keyed, in experiment order


def test_the_committed_labs_v6_parquet_imports_typed(store, tmp_path):
    """Every evaluation of artifacts/lab (JSON text in its Parquet) against its JSON, decoded here;
    exported again (typed Parquet) and imported into another file, the rows are the same."""
    table = pq.read_table(ARTIFACTS / "results" / "evaluations.parquet")
    assert table.schema.field("test_results").type == "string"  # the committed export is v6's
    store.put_arrow(Evaluation, table)
    got = {(e.experiment_id, e.checkpoint_id, e.problem_id, e.sample_idx): e for e in store.select(Evaluation)}
    assert len(got) == table.num_rows
    reasons = 0
    for row in table.to_pylist():
        e = got[(row["experiment_id"], row["checkpoint_id"], row["problem_id"], row["sample_idx"])]
        parts = json.loads(row["test_results"])
        assert e.test_results == [TestResult(**t) for t in parts if "index" in t]
        assert e.format_reason == next((t["format_reason"] for t in parts if "format_reason" in t), None)
        assert e.rewards == Rewards(**json.loads(row["rewards"]))
        reasons += e.format_reason is not None
    assert reasons == sum(row["verdict"] == "FORMAT" for row in table.to_pylist()) > 0

    exported = store.experiment_rows(sorted({k[0] for k in got}))["evaluations"]
    assert exported.schema.field("rewards").type.num_fields == 9  # typed, not text
    again = Store(tmp_path / "again.duckdb")
    again.put_arrow(Evaluation, exported)
    assert again.select(Evaluation) == store.select(Evaluation)
