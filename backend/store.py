"""The only module that speaks SQL (with store_queries.py, its analysis inputs). A DuckDB file,
opened briefly and closed again.

DuckDB allows one read-write process at a time, so nobody holds the file open: writers open it,
run one short transaction and close; readers (the dashboard) open it read-only and retry
briefly while a writer holds the lock. Rows are the dataclasses of backend/records.py (store_rows.py
converts them).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import json
import os
import random
import re
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import duckdb
import pyarrow as pa

from backend.errors import UserError
from backend.records import TABLES
from backend.store_queries import AnalysisQueries
from backend.store_rows import from_row, json_fields, to_row

SCHEMA_VERSION = 7
# Columns the store derives on insert, by table: an integer key for each experiment's evaluations, so
# DuckDB's zone maps (which keep only a prefix of a string) skip other experiments' row groups.
DERIVED = {"evaluations": {"experiment_key": "md5_number_lower(experiment_id)"}}
DB_DIR = Path(__file__).resolve().parent.parent / "db"
DEFAULT_DB = DB_DIR / "frontier.duckdb"
LOCK_RETRY_S = float(os.environ.get("FLAB_DB_LOCK_RETRY_S", "15"))  # any writer's short transaction fits
# Evaluations written before v7 (a v6 file, Parquet exported from one, such as the committed lab's) hold
# rewards and per-test results as JSON text. db/v6_json.sql defines the macros that read them typed, for
# db/migrations/007.sql and for such an import alike; these are the columns an import reads through them.
V6_JSON = {
    "evaluations": {
        "rewards": "v6_rewards(rewards)",
        "test_results": "v6_test_results(test_results)",
        "format_reason": "v6_format_reason(test_results)",
    }
}
V6_TEXT = {"evaluations": ("rewards", "test_results")}  # the columns whose text type tells a v6 export


class _ModeGate:
    """Within one process, DuckDB refuses a read-only and a read-write connection to one file at the
    same time ("different configuration"), at once rather than after a wait: a dashboard launching a
    job while another session's page (or the warm-up) reads would fail. So this process's
    connections to a file take turns by mode: any number of one mode at once, and a waiting writer
    holds new readers back so that a stream of page reads cannot starve it."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._read_only: bool | None = None  # the mode of the open connections
        self._open = 0
        self._writers_waiting = 0
        self._mine = threading.local()  # this thread's open connections: a nested one never waits

    def _free_for(self, read_only: bool) -> bool:
        if read_only and self._writers_waiting:
            return False
        return self._open == 0 or self._read_only == read_only

    @contextlib.contextmanager
    def turn(self, read_only: bool, timeout: float, path: Path) -> Iterator[None]:
        nested = getattr(self._mine, "open", 0) > 0  # a second mode here is DuckDB's error, raised at connect
        with self._cond:
            if not read_only:
                self._writers_waiting += 1
            try:
                if not nested and not self._cond.wait_for(lambda: self._free_for(read_only), timeout):
                    busy = "writes" if read_only else "reads"
                    raise UserError(f"database {path} stayed busy with this process's {busy} for {timeout:.0f}s; retry")
            finally:
                if not read_only:  # readers it held back may go now (it has the turn, or gave up)
                    self._writers_waiting -= 1
                    self._cond.notify_all()
            if self._open == 0:
                self._read_only = read_only
            self._open += 1
        self._mine.open = getattr(self._mine, "open", 0) + 1
        try:
            yield
        finally:
            self._mine.open -= 1
            with self._cond:
                self._open -= 1
                self._cond.notify_all()


_gates: dict[str, _ModeGate] = {}
_gates_lock = threading.Lock()


def _gate(path: Path) -> _ModeGate:
    with _gates_lock:
        return _gates.setdefault(os.path.realpath(path), _ModeGate())


def default_db_path() -> Path:
    return Path(os.environ.get("FLAB_DB") or DEFAULT_DB)


def _is_lock_conflict(exc: Exception) -> bool:
    text = str(exc).lower()
    return "lock" in text and ("conflict" in text or "could not set" in text)


def _insert(verb: str, table: str, cols: list[str], source: str, v6_json: bool = False) -> str:
    """INSERT of `cols` from a registered source, with the table's derived columns computed (a
    derived column the source carries, e.g. from an export, is computed again); with v6_json, the
    columns a v6 export holds as JSON text are read typed (V6_JSON)."""
    derived = {**DERIVED.get(table, {}), **(V6_JSON.get(table, {}) if v6_json else {})}
    given = [c for c in cols if c not in derived]
    names, values = ", ".join([*given, *derived]), ", ".join([*given, *derived.values()])
    return f"{verb} INTO {table} ({names}) SELECT {values} FROM {source}"


def _where(table: str, where: dict) -> tuple[str, list]:
    """WHERE terms for column = value; on evaluations, an experiment id also filters on its key."""
    terms, params = [f"{k} = ?" for k in where], list(where.values())
    if "experiment_key" in DERIVED.get(table, {}) and "experiment_id" in where:
        terms.insert(0, "experiment_key = md5_number_lower(?)")
        params.insert(0, where["experiment_id"])
    return " AND ".join(terms) or "TRUE", params


def _v6_json_macros(con: duckdb.DuckDBPyConnection) -> None:
    con.execute((DB_DIR / "v6_json.sql").read_text())


class Store(AnalysisQueries):
    """A DuckDB database file with the frontier-lab schema."""

    def __init__(self, path: str | Path | None = None, *, migrate: bool = True):
        self.path = Path(path) if path is not None else default_db_path()
        if migrate:
            self.ensure_schema()

    # -- connections ---------------------------------------------------------------------

    @contextlib.contextmanager
    def connect(self, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        """Open, yield, close. This process's connections take turns by mode (_ModeGate); lock
        conflicts with another process are retried with backoff."""
        self._check_path(read_only)
        deadline = time.monotonic() + LOCK_RETRY_S
        with _gate(self.path).turn(read_only, LOCK_RETRY_S, self.path):
            delay = 0.005
            while True:
                try:
                    con = duckdb.connect(str(self.path), read_only=read_only)
                    break
                except (duckdb.IOException, duckdb.ConnectionException) as exc:
                    if _is_lock_conflict(exc) and time.monotonic() < deadline:
                        time.sleep(delay * (1 + random.random()))
                        delay = min(delay * 2, 0.2)
                        continue
                    raise self._user_error(exc) from exc
            try:
                yield con
            finally:
                con.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """One short read-write transaction: all of it lands, or none of it."""
        with self.connect() as con:
            con.begin()
            try:
                yield con
            except BaseException:
                con.rollback()
                raise
            con.commit()

    def _check_path(self, read_only: bool) -> None:
        if self.path.is_dir():
            raise UserError(f"database path {self.path} is a folder; pass a file such as {self.path}/frontier.duckdb")
        if not self.path.parent.is_dir():
            raise UserError(f"database folder {self.path.parent} does not exist; create it or pass another --db")
        if read_only and not self.path.exists():
            raise UserError(f"no database at {self.path}; run `python -m backend db init --db {self.path}` first")

    def _user_error(self, exc: Exception) -> UserError:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if _is_lock_conflict(exc):
            holder = re.search(r"held in (.+?) \(PID (\d+)\)", str(exc))
            who = f"{holder.group(1)} (PID {holder.group(2)})" if holder else "another process"
            return UserError(
                f"database {self.path} stayed locked by {who} for {LOCK_RETRY_S:g}s; retry when it finishes"
            )
        return UserError(f"cannot open database {self.path}: {first}")

    # -- schema --------------------------------------------------------------------------

    def schema_version(self, con: duckdb.DuckDBPyConnection | None = None) -> int | None:
        """The stored version; 0 for an unversioned (prototype) database; None for an empty one."""
        with contextlib.nullcontext(con) if con else self.connect(read_only=True) as c:
            tables = {r[0] for r in c.execute("SELECT table_name FROM information_schema.tables").fetchall()}
            if "schema_meta" in tables:
                row = c.execute("SELECT value FROM schema_meta WHERE key = 'version'").fetchone()
                return int(row[0]) if row else 0
            return 0 if tables else None

    def ensure_schema(self) -> int:
        """Create a fresh database or migrate an older one; refuse a newer one. Returns the version."""
        if self.path.exists():
            with self.connect(read_only=True) as con:
                if self.schema_version(con) == SCHEMA_VERSION:
                    return SCHEMA_VERSION  # the common case: no write lock taken
        with self.transaction() as con:
            version = self.schema_version(con)
            if version is not None and version > SCHEMA_VERSION:
                raise UserError(
                    f"database {self.path} has schema v{version}, newer than this frontier-lab (v{SCHEMA_VERSION}); "
                    "upgrade frontier-lab or pass another --db"
                )
            if version is not None:
                _v6_json_macros(con)
                for step in range(version + 1, SCHEMA_VERSION + 1):
                    con.execute((DB_DIR / "migrations" / f"{step:03d}.sql").read_text())
            con.execute((DB_DIR / "schema.sql").read_text())
            con.execute("INSERT OR REPLACE INTO schema_meta VALUES ('version', ?)", [str(SCHEMA_VERSION)])
        return SCHEMA_VERSION

    # -- generic entity access -------------------------------------------------------------

    def put(self, records: Iterable, *, replace: bool = True, con: duckdb.DuckDBPyConnection | None = None) -> int:
        """Insert records of one type. replace=False keeps existing rows (idempotent re-inserts)."""
        records = list(records)
        if not records:
            return 0
        cls = type(records[0])
        table, _ = TABLES[cls]
        rows = [to_row(r) for r in records]
        cols = list(rows[0])
        batch = pa.Table.from_pylist(rows)
        verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
        with contextlib.nullcontext(con) if con else self.transaction() as c:
            c.register("_batch", batch)
            try:
                c.execute(_insert(verb, table, cols, "_batch"))
            finally:
                c.unregister("_batch")
        return len(rows)

    def get(self, cls: type, *key):
        found = self.select(cls, dict(zip(TABLES[cls][1], key, strict=True)))
        return found[0] if found else None

    def select(self, cls: type, where: dict | None = None, newest_first: bool = False) -> list:
        """Rows equal to `where`, in key order, or newest first (by created_at)."""
        table, pk = TABLES[cls]
        where = where or {}
        names = {f.name for f in dataclasses.fields(cls)}
        if not set(where) <= names:
            raise ValueError(f"{cls.__name__} has no field {sorted(set(where) - names)[0]!r}")
        clause, params = _where(table, where)
        order = "created_at DESC" if newest_first else ", ".join(pk)
        with self.connect(read_only=True) as con:
            cur = con.execute(f"SELECT * FROM {table} WHERE {clause} ORDER BY {order}", params)
            names = [d[0] for d in cur.description]
            return [from_row(cls, dict(zip(names, r, strict=True))) for r in cur.fetchall()]

    def update(self, cls: type, key: tuple, **changes) -> None:
        table, pk = TABLES[cls]
        for name in json_fields(cls) & changes.keys():
            changes[name] = None if changes[name] is None else json.dumps(changes[name])
        if "updated_at" in {f.name for f in dataclasses.fields(cls)}:
            changes.setdefault("updated_at", dt.datetime.now())
        sets = ", ".join(f"{k} = ?" for k in changes)
        where = " AND ".join(f"{k} = ?" for k in pk)
        with self.transaction() as con:
            con.execute(f"UPDATE {table} SET {sets} WHERE {where}", [*changes.values(), *key])

    def counts(self) -> dict[str, int]:
        with self.connect(read_only=True) as con:
            return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t, _ in TABLES.values()}

    def count(self, cls: type, where: dict | None = None) -> int:
        table, _ = TABLES[cls]
        clause, params = _where(table, where or {})
        with self.connect(read_only=True) as con:
            return con.execute(f"SELECT count(*) FROM {table} WHERE {clause}", params).fetchone()[0]

    def put_arrow(self, cls: type, table, *, replace: bool = False) -> int:
        """Bulk insert of an Arrow table whose columns are a subset of the entity's (e.g. imported
        Parquet results): one statement instead of one Python object per row. Columns that a v6
        export holds as JSON text are read typed."""
        name, _ = TABLES[cls]
        verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
        v6_json = any(
            c in table.column_names and pa.types.is_string(table.schema.field(c).type) for c in V6_TEXT.get(name, ())
        )
        with self.transaction() as con:
            if v6_json:
                _v6_json_macros(con)
            con.register("_bulk", table)
            try:
                con.execute(_insert(verb, name, table.column_names, "_bulk", v6_json))
            finally:
                con.unregister("_bulk")
        return table.num_rows

    def experiment_rows(self, experiment_ids: list[str]) -> dict:
        """Every row of these experiments as Arrow tables: the experiments, their samples,
        evaluations and metrics, and the checkpoints they sampled, trained or merged from."""
        marks = ", ".join("?" for _ in experiment_ids)
        used = f"""SELECT checkpoint_id FROM samples WHERE experiment_id IN ({marks})
                   UNION SELECT id FROM checkpoints WHERE experiment_id IN ({marks})"""
        queries = {
            "experiments": (f"SELECT * FROM experiments WHERE id IN ({marks})", 1),
            "samples": (f"SELECT * FROM samples WHERE experiment_id IN ({marks})", 1),
            "evaluations": (f"SELECT * EXCLUDE (experiment_key) FROM evaluations WHERE experiment_id IN ({marks})", 1),
            "metrics": (f"SELECT * FROM metrics WHERE experiment_id IN ({marks})", 1),
            "checkpoints": (
                f"""SELECT * FROM checkpoints WHERE id IN ({used})
                    OR id IN (SELECT low_id FROM checkpoints WHERE id IN ({used}))
                    OR id IN (SELECT high_id FROM checkpoints WHERE id IN ({used}))""",
                6,
            ),
        }
        with self.connect(read_only=True) as con:
            return {
                name: con.sql(sql, params=experiment_ids * repeat).to_arrow_table()
                for name, (sql, repeat) in queries.items()
            }

    def problem_index(self) -> dict[str, list[tuple[str, str, str | None]]]:
        """bench → [(problem id, title, difficulty)] in id order: the sets a form offers, without statements."""
        with self.connect(read_only=True) as con:
            rows = con.execute("SELECT bench, id, title, difficulty FROM problems ORDER BY bench, id").fetchall()
        index: dict[str, list] = {}
        for bench, pid, title, difficulty in rows:
            index.setdefault(bench, []).append((pid, title, difficulty))
        return index

    def replace_problems(self, built: list) -> None:
        """Store (Problem, [Test]) pairs, replacing each problem's previous tests, atomically."""
        with self.transaction() as con:
            self.put([p for p, _ in built], con=con)
            for problem, tests in built:
                con.execute("DELETE FROM tests WHERE problem_id = ?", [problem.id])
                if tests:
                    self.put(tests, con=con)

    def sample_keys(self, experiment_id: str, checkpoint_id: str) -> set[tuple[str, int]]:
        """(problem, sample index) already sampled: what a resumed rollout skips."""
        return self._keys("samples", experiment_id, checkpoint_id)

    def evaluation_keys(self, experiment_id: str, checkpoint_id: str) -> set[tuple[str, int]]:
        """(problem, sample index) already judged: what a resumed job does not judge again."""
        return self._keys("evaluations", experiment_id, checkpoint_id)

    def _keys(self, table: str, experiment_id: str, checkpoint_id: str) -> set[tuple[str, int]]:
        clause, params = _where(table, {"experiment_id": experiment_id, "checkpoint_id": checkpoint_id})
        with self.connect(read_only=True) as con:
            rows = con.execute(f"SELECT problem_id, sample_idx FROM {table} WHERE {clause}", params).fetchall()
        return {(p, i) for p, i in rows}
