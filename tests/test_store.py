import datetime as dt
from pathlib import Path

import duckdb
import pytest

from backend.errors import UserError
from backend.records import Checkpoint, Evaluation, Experiment, Job, Problem, Rewards, Sample, Test, TestResult, tier_of
from backend.store import SCHEMA_VERSION, Store

V6_SCHEMA = Path(__file__).resolve().parent / "fixtures" / "schema_v6.sql"  # older files are built from it


def _examples():
    return [
        Problem(
            id="builtin/sum",
            bench="builtin",
            title="Sum",
            statement="Add numbers.",
            difficulty="easy",
            time_limit_s=1.5,
            memory_limit_mb=128,
            tags=["math", "io"],
        ),
        Test(problem_id="builtin/sum", idx=0, input="1 2\n", output="3\n", input_len=4, tier=1, is_public=True),
        Checkpoint(
            id="ck-a",
            path="/ckpt/a",
            kind="merged",
            low_id="lo",
            high_id="hi",
            alpha=-0.5,
            weights={"lo": 1.5, "hi": -0.5},
            content_hash="abc",
            model_type="qwen2",
            created_at=dt.datetime(2026, 1, 2, 3, 4, 5),
        ),
        Experiment(
            id="exp-1",
            kind="sweep",
            name="demo",
            spec={"alphas": [0, 0.5, 1]},
            note="synthetic",
            created_at=dt.datetime(2026, 1, 2, 3, 4, 5),
        ),
        Job(
            id="job-1",
            kind="sweep",
            status="running",
            experiment_id="exp-1",
            stage="rollout",
            progress={"rollout": {"done": 3, "total": 8}},
            pid=1234,
            created_at=dt.datetime(2026, 1, 2),
            updated_at=dt.datetime(2026, 1, 3),
        ),
        Sample(
            experiment_id="exp-1",
            checkpoint_id="ck-a",
            problem_id="builtin/sum",
            sample_idx=0,
            setting="reasoning",
            completion="```python\nprint(3)\n```",
            transcript=[{"role": "assistant", "content": "x"}],
            prompt_tokens=10,
            completion_tokens=7,
            finish_reason="stop",
            code="print(3)",
            language="python",
            latency_s=0.25,
        ),
        Evaluation(
            experiment_id="exp-1",
            checkpoint_id="ck-a",
            problem_id="builtin/sum",
            sample_idx=0,
            outcome="correct",
            verdict="AC",
            highest_tier_passed=6,
            cpu_s=0.01,
            mem_mb=9.5,
            rewards=Rewards(1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
            test_results=[TestResult(0, 4, 1, "AC", cpu_s=0.01, wall_s=0.02, mem_mb=9.5)],
        ),
    ]


def test_every_entity_round_trips(store):
    from backend.records import TABLES

    for record in _examples():
        store.put([record])
        key = tuple(getattr(record, k) for k in TABLES[type(record)][1])
        back = store.get(type(record), *key)
        if hasattr(record, "created_at") and record.created_at is None:
            record.created_at = back.created_at
        assert back == record


def test_reinsert_of_sample_key_changes_nothing(store):
    sample = _examples()[5]
    store.put([sample], replace=False)
    changed = Sample(**{**sample.__dict__, "completion": "different"})
    store.put([changed], replace=False)
    assert store.count(Sample) == 1
    assert store.get(Sample, "exp-1", "ck-a", "builtin/sum", 0).completion == sample.completion


def test_tier_is_smallest_k_with_len_below_power_of_ten():
    assert [tier_of(n) for n in (0, 1, 9, 10, 99, 100, 999_999, 1_000_000)] == [1, 1, 1, 2, 2, 3, 6, 7]


def test_fresh_database_has_current_version(store):
    assert store.schema_version() == SCHEMA_VERSION


def test_v0_database_is_migrated_and_keeps_rows(db_path):
    con = duckdb.connect(str(db_path))
    con.execute("CREATE TABLE problems (id VARCHAR PRIMARY KEY, title VARCHAR, statement VARCHAR)")
    con.execute("CREATE TABLE tests (problem_id VARCHAR, idx INTEGER, input VARCHAR, output VARCHAR)")
    con.execute("INSERT INTO problems VALUES ('old/p1', 'Old', 'An old problem.')")
    con.execute("INSERT INTO tests VALUES ('old/p1', 0, '12345678901', '1')")
    con.close()

    store = Store(db_path)
    assert store.schema_version() == SCHEMA_VERSION
    problem = store.get(Problem, "old/p1")
    assert (problem.bench, problem.title, problem.kind, problem.checker) == ("old", "Old", "stdin", "exact")
    test = store.get(Test, "old/p1", 0)
    assert (test.input_len, test.tier) == (11, 2)
    assert store.counts()["samples"] == 0  # the tables v0 lacked now exist


def test_newer_database_is_refused(db_path):
    Store(db_path)
    con = duckdb.connect(str(db_path))
    con.execute("UPDATE schema_meta SET value = '999' WHERE key = 'version'")
    con.close()
    with pytest.raises(UserError, match=r"schema v999, newer than this frontier-lab"):
        Store(db_path)


def test_bad_paths_give_one_line(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        Store(tmp_path / "missing-dir" / "x.duckdb")
    not_db = tmp_path / "notes.txt"
    not_db.write_text("hello, not a database\n" * 100)
    with pytest.raises(UserError, match="cannot open database") as info:
        Store(not_db)
    assert "\n" not in str(info.value)


def test_failed_transaction_leaves_nothing(store):
    with pytest.raises(RuntimeError):
        with store.transaction() as con:
            store.put([_examples()[0]], con=con)
            raise RuntimeError("boom")
    assert store.count(Problem) == 0


def test_v2_database_gains_the_accounting_column_and_keeps_evaluations(db_path):
    """v2 -> v3: evaluations judged before say nothing of their accounting; new ones carry it."""
    from backend.records import Evaluation

    con = duckdb.connect(str(db_path))
    con.execute(V6_SCHEMA.read_text().replace(
        "    accounting          VARCHAR,           "
        "-- how cpu_s/mem_mb were measured: cgroup-v2 | cgroup-v1 | rlimits\n", ""
    ))  # fmt: skip
    con.execute("INSERT OR REPLACE INTO schema_meta VALUES ('version', '2')")
    con.execute("INSERT INTO evaluations (experiment_id, checkpoint_id, problem_id, sample_idx, outcome, cpu_s) "
                "VALUES ('e', 'c', 'p', 0, 'correct', 0.5)")  # fmt: skip
    cols = [
        r[0]
        for r in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'evaluations'"
        ).fetchall()
    ]
    con.close()
    assert "accounting" not in cols  # the stand-in really is a v2 database

    store = Store(db_path)
    assert store.schema_version() == SCHEMA_VERSION  # migrated through v3 to the current version
    old = store.get(Evaluation, "e", "c", "p", 0)
    assert (old.cpu_s, old.accounting) == (0.5, None)
    store.put([Evaluation("e", "c", "p", 1, outcome="correct", accounting="cgroup-v1")])
    assert store.get(Evaluation, "e", "c", "p", 1).accounting == "cgroup-v1"


def test_v3_database_loses_the_unused_data_path_and_keeps_its_tests(db_path):
    """v3 -> v4: tests.data_path (never written) is dropped; the tests stay."""
    from backend.records import Test

    con = duckdb.connect(str(db_path))
    con.execute(V6_SCHEMA.read_text())
    con.execute("ALTER TABLE tests ADD COLUMN data_path VARCHAR")
    con.execute("INSERT OR REPLACE INTO schema_meta VALUES ('version', '3')")
    con.execute("INSERT INTO tests (problem_id, idx, input, output, input_len, tier) VALUES ('p', 0, '1', '2', 1, 1)")
    con.close()
    store = Store(db_path)
    assert store.schema_version() == SCHEMA_VERSION
    with duckdb.connect(str(db_path), read_only=True) as con:
        cols = [
            r[0]
            for r in con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'tests'"
            ).fetchall()
        ]
    assert "data_path" not in cols
    assert store.select(Test, {"problem_id": "p"})[0].output == "2"


def scans_of(profile: Path, table: str) -> tuple[int, int]:
    """(row groups scanned, row groups in the table) of the last query's scans of `table`."""
    import json

    found = []

    def walk(op):
        if op.get("type") == "TABLE_SCAN" and op.get("extra_info", {}).get("Table", "").endswith(f".{table}"):
            found.append((op["row_groups_scanned"], op["total_row_groups_to_scan"]))
        for child in op.get("children", []):
            walk(child)

    for op in json.loads(profile.read_text())["operator"]:
        walk(op)
    assert found, f"no scan of {table} in the profile"
    return tuple(map(sum, zip(*found, strict=True)))


def test_one_experiments_outcomes_read_only_its_row_groups(store, tmp_path, monkeypatch):
    """Experiment ids share their first characters ("sweep-20250601-…") and DuckDB's zone maps keep
    only a prefix of a string: on the id alone every row group is read. The integer key skips the
    others (issue #48, Scale)."""
    import pyarrow as pa

    from backend.records import Evaluation

    rows = 150_000  # per experiment: DuckDB's row groups hold 122 880 rows, so each spans two or three
    for e in range(3):
        store.put_arrow(Evaluation, pa.table({
            "experiment_id": [f"sweep-20250601-00000{e}"] * rows, "checkpoint_id": ["c"] * rows,
            "problem_id": [f"p{i % 100}" for i in range(rows)], "sample_idx": list(range(rows)),
            "outcome": ["correct", "correctness_failure", "optimization_failure"] * (rows // 3),
        }))  # fmt: skip
    profile, real = tmp_path / "profile.json", duckdb.connect

    def profiled(*args, **kwargs):
        con = real(*args, **kwargs)
        con.execute("PRAGMA enable_profiling = 'json'")
        con.execute(f"PRAGMA profiling_output = '{profile}'")
        return con

    monkeypatch.setattr(duckdb, "connect", profiled)
    counts = store.outcome_counts("sweep-20250601-000001")
    assert counts["n"].sum() == rows and counts["correct"].sum() == rows // 3
    scanned, total = scans_of(profile, "evaluations")
    assert total >= 4 and scanned <= 2  # its own two, of at least four
    with store.connect(read_only=True) as con:  # the same filter on the id alone: every row group
        con.execute("SELECT count(*) FROM evaluations WHERE experiment_id = 'sweep-20250601-000001'").fetchall()
    assert scans_of(profile, "evaluations") == (total, total)
    assert store.experiment_stamp("sweep-20250601-000001")[0] == rows
    assert scans_of(profile, "evaluations")[0] <= 2


def test_v5_database_gains_experiment_keys_and_keeps_evaluations(db_path):
    """v5 -> v7: the evaluations are rewritten with their experiment's key, in experiment order."""
    con = duckdb.connect(str(db_path))
    con.execute(V6_SCHEMA.read_text().replace(
        "    experiment_key      UBIGINT,           "
        "-- md5_number_lower(experiment_id), filled by backend/store.py (see 006.sql)\n", ""
    ))  # fmt: skip
    con.execute("INSERT OR REPLACE INTO schema_meta VALUES ('version', '5')")
    con.execute("INSERT INTO evaluations (experiment_id, checkpoint_id, problem_id, sample_idx, outcome) VALUES "
                "('b', 'c', 'p', 0, 'correct'), ('a', 'c', 'p', 0, 'format_failure'), "
                "('b', 'c', 'p', 1, 'correct')")  # fmt: skip
    con.close()
    store = Store(db_path)
    assert store.schema_version() == SCHEMA_VERSION
    with store.connect(read_only=True) as con:
        rows = con.execute(
            "SELECT experiment_id, experiment_key = md5_number_lower(experiment_id) FROM evaluations"
        ).fetchall()
    assert rows == [("a", True), ("b", True), ("b", True)]  # keyed, and stored in experiment order
    assert store.outcome_counts("b")["correct"].to_list() == [2]
    store.put([Evaluation("a", "c", "p", 1, outcome="correct")])
    assert store.experiment_stamp("a")[0] == 2
