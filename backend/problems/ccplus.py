"""CodeContests+ from local Parquet shards: id, title, description, time_limit (ms), memory_limit
(MB), test_cases [{input, output}], checker (testlib source, used as a special judge), and when
present correct_submissions / incorrect_submissions ([{code, language}]) to validate the judge."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from backend.errors import UserError
from backend.records import Problem, Test, tier_of

BENCH = "ccplus"
REQUIRED = ("id", "title", "description", "time_limit", "memory_limit", "test_cases")


@dataclass
class CCPlusFilter:
    min_tests: int = 1
    max_time_limit_s: float | None = None
    max_memory_mb: int | None = None

    def keeps(self, row: dict) -> bool:
        return not (
            len(row["test_cases"] or []) < self.min_tests
            or (self.max_time_limit_s and row["time_limit"] / 1000 > self.max_time_limit_s)
            or (self.max_memory_mb and row["memory_limit"] > self.max_memory_mb)
        )


@dataclass
class Submission:
    code: str
    language: str  # as the dataset names it, e.g. "cpp", "python3"
    correct: bool


def shards(path: Path) -> list[Path]:
    files = sorted(path.rglob("*.parquet")) if path.is_dir() else [path]
    if not files or not all(f.is_file() for f in files):
        raise UserError(f"no Parquet shards found at {path}")
    return files


def load(path: str | Path, flt: CCPlusFilter | None = None) -> list[tuple[Problem, list[Test], list[Submission]]]:
    import pyarrow.parquet as pq

    flt = flt or CCPlusFilter()
    out = []
    for shard in shards(Path(path)):
        try:
            table = pq.read_table(shard)
        except Exception as exc:  # pyarrow raises several types for a broken file
            raise UserError(f"{shard} is not a readable Parquet file: {exc}") from exc
        missing = [c for c in REQUIRED if c not in table.column_names]
        if missing:
            raise UserError(f"{shard}: missing column {missing[0]!r}")
        for n, row in enumerate(table.to_pylist()):
            if not flt.keeps(row):
                continue
            try:
                out.append(_to_records(row))
            except (KeyError, TypeError, ValueError) as exc:
                raise UserError(f"{shard} row {n}: malformed ({exc})") from exc
    return out


def _to_records(row: dict) -> tuple[Problem, list[Test], list[Submission]]:
    pid = f"{BENCH}/{row['id']}"
    checker = row.get("checker") or None
    problem = Problem(
        id=pid, bench=BENCH, title=row["title"], statement=row["description"], kind="stdin",
        time_limit_s=row["time_limit"] / 1000, memory_limit_mb=int(row["memory_limit"]),
        checker="special" if checker else "exact", checker_source=checker, platform="codecontests+",
    )  # fmt: skip
    cases = sorted(row["test_cases"], key=lambda c: len(c["input"]))
    tests = [
        Test(problem_id=pid, idx=i, input=c["input"], output=c["output"], input_len=len(c["input"]), tier=tier_of(len(c["input"])))
        for i, c in enumerate(cases)
    ]  # fmt: skip
    subs = [Submission(s["code"], s["language"], True) for s in row.get("correct_submissions") or []]
    subs += [Submission(s["code"], s["language"], False) for s in row.get("incorrect_submissions") or []]
    return problem, tests, subs
