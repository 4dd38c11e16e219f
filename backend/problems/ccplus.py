"""CodeContests+ from local Parquet shards, streamed: one row group at a time and only the columns
a step needs, so a 2–6 GB shard (about 1,000 submissions per problem) never sits in memory.

Layout: the dataset root holds one folder per config, `ccplus_1x` … `ccplus_5x` (1x to 5x the
tests), beside the `default` shards; `--config` picks one (1x by default, as in the paper), and a
shard or a config folder can be given directly. Columns: id, title, description, time_limit (ms),
memory_limit (MB), test_cases [{input, output}], checker (testlib source), true_positive_rate /
true_negative_rate (how well the dataset's tests separate its correct and incorrect
submissions), correct_submissions / incorrect_submissions [{code, language}].
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from backend.errors import UserError
from backend.records import Problem, Test, tier_of

BENCH = "ccplus"
CONFIGS = ("1x", "2x", "3x", "4x", "5x")
REQUIRED = ("id", "title", "description", "time_limit", "memory_limit", "test_cases")
OPTIONAL = ("checker", "true_positive_rate", "true_negative_rate")
SUBMISSION_COLUMNS = ("correct_submissions", "incorrect_submissions")
# the dataset's language labels -> what the judge runs; others (py2, java) are skipped and counted
LANGUAGES = {"py3": "python", "python3": "python", "python": "python", "cpp": "cpp", "c++": "cpp", "cpp17": "cpp"}
ROWS_PER_BATCH = 16


class CCPlusConfig(BaseModel):
    """Which of the dataset's configs: declared once, shared by `problems import ccplus` and `calibrate`."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    config: str = Field("1x", title="Config", json_schema_extra={"choices": CONFIGS})
    """1x…5x: how many tests per problem; 1x, as in the paper."""


class CCPlusFilter(CCPlusConfig):
    """`problems import ccplus` and the Launch page's import: which CodeContests+ problems to import."""

    model_config = ConfigDict(use_attribute_docstrings=True)
    min_tests: int = Field(1, ge=1, title="At least N tests")
    """Skip problems with fewer tests."""
    max_time_limit_s: float | None = Field(
        None, gt=0, title="Max time limit (s)", json_schema_extra={"cli": "--max-time-limit", "none": "any"}
    )
    """Skip problems whose time limit is longer (seconds); none: any."""
    max_memory_mb: int | None = Field(
        None, ge=1, title="Max memory (MB)", json_schema_extra={"cli": "--max-memory", "none": "any"}
    )
    """Skip problems whose memory limit is larger (MB); none: any."""
    min_tpr: float | None = Field(None, ge=0, le=1, title="Min true-positive rate", json_schema_extra={"none": "any"})
    """Keep problems whose tests accept at least this share of the dataset's correct submissions."""
    min_tnr: float | None = Field(None, ge=0, le=1, title="Min true-negative rate", json_schema_extra={"none": "any"})
    """... and reject at least this share of its incorrect ones."""

    def keeps(self, row: dict) -> bool:
        tpr, tnr = row.get("true_positive_rate"), row.get("true_negative_rate")
        return not (
            len(row["test_cases"] or []) < self.min_tests
            or (self.max_time_limit_s and row["time_limit"] / 1000 > self.max_time_limit_s)
            or (self.max_memory_mb and row["memory_limit"] > self.max_memory_mb)
            or (self.min_tpr is not None and (tpr is None or tpr < self.min_tpr))
            or (self.min_tnr is not None and (tnr is None or tnr < self.min_tnr))
        )


@dataclass
class Submission:
    code: str
    language: str  # what the judge runs: python | cpp
    correct: bool


@dataclass
class Submissions:
    """A problem's judgeable submissions, and how many were skipped per dataset language."""

    kept: list[Submission] = field(default_factory=list)
    skipped: Counter = field(default_factory=Counter)


def shards(path: Path, config: str | None = "1x") -> list[Path]:
    """The shards of one config: a file, a config folder, or the dataset root."""
    if path.is_file():
        return [path]
    if config is not None and config not in CONFIGS:
        raise UserError(f"unknown CodeContests+ config {config!r}; choose one of {', '.join(CONFIGS)}")
    folders = sorted(p for p in path.glob("ccplus_*x") if p.is_dir()) if path.is_dir() else []
    if folders:  # the dataset root: never mix configs (their ids repeat)
        chosen = path / f"ccplus_{config or '1x'}"
        if not chosen.is_dir():
            raise UserError(f"{path} has {', '.join(f.name for f in folders)}, not ccplus_{config}; pass --config")
        path = chosen
    files = sorted(path.rglob("*.parquet")) if path.is_dir() else []
    if not files:
        raise UserError(f"no Parquet shards found at {path}")
    return files


def _open(shard: Path):
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(shard)
    except Exception as exc:  # pyarrow raises several types for a broken file
        raise UserError(f"{shard} is not a readable Parquet file: {exc}") from exc


def rows(shard: Path, columns: tuple[str, ...], ids: set[str] | None = None) -> Iterator[tuple[int, dict]]:
    """(row number, row) with just these columns (those present), one row group in memory at a time.
    With `ids`, a row group is read only when its `id` column holds one of them."""
    f = _open(shard)
    names = set(f.schema_arrow.names)
    missing = [c for c in REQUIRED if c not in names]
    if missing:
        raise UserError(f"{shard}: missing column {missing[0]!r}")
    wanted = [c for c in columns if c in names]
    n = 0
    for group in range(f.num_row_groups):
        size = f.metadata.row_group(group).num_rows
        if ids is not None and not ids & set(f.read_row_group(group, columns=["id"]).column("id").to_pylist()):
            n += size
            continue
        table = f.read_row_group(group, columns=wanted)
        for start in range(0, table.num_rows, ROWS_PER_BATCH):  # Python objects for a few rows at a time
            for row in table.slice(start, ROWS_PER_BATCH).to_pylist():
                yield n, row
                n += 1
        del table


def load(
    path: str | Path, flt: CCPlusFilter | None = None, config: str | None = "1x"
) -> list[tuple[Problem, list[Test]]]:
    """Every matching problem with its tests (no submissions: `submissions` reads those)."""
    flt = flt or CCPlusFilter()
    out, seen = [], set()
    for shard in shards(Path(path), config):
        for n, row in rows(shard, (*REQUIRED, *OPTIONAL)):
            if not flt.keeps(row):
                continue
            try:
                problem, tests = _to_records(row)
            except (KeyError, TypeError, ValueError) as exc:
                raise UserError(f"{shard} row {n}: malformed ({exc})") from exc
            if problem.id in seen:
                raise UserError(f"{shard} row {n}: problem {row['id']} appears twice; point at one config")
            seen.add(problem.id)
            out.append((problem, tests))
    return out


def submissions(path: str | Path, problem_ids: set[str], config: str | None = "1x") -> dict[str, Submissions]:
    """The dataset's submissions for these problems, streamed."""
    out: dict[str, Submissions] = {}
    raw_ids = {pid.split("/", 1)[1] for pid in problem_ids}
    for shard in shards(Path(path), config):
        for _, row in rows(shard, ("id", *SUBMISSION_COLUMNS), ids=raw_ids):
            pid = f"{BENCH}/{row['id']}"
            if pid not in problem_ids:
                continue
            subs = out.setdefault(pid, Submissions())
            for column, correct in (("correct_submissions", True), ("incorrect_submissions", False)):
                for s in row.get(column) or []:
                    language = LANGUAGES.get(str(s.get("language", "")).lower())
                    if language:
                        subs.kept.append(Submission(s["code"], language, correct))
                    else:
                        subs.skipped[s.get("language")] += 1
    return out


def sample_ids(ids: list[str], k: int, seed: int = 0) -> list[str]:
    return sorted(random.Random(seed).sample(sorted(ids), min(k, len(ids))))


def _to_records(row: dict) -> tuple[Problem, list[Test]]:
    pid = f"{BENCH}/{row['id']}"
    checker = row.get("checker") or None
    problem = Problem(
        id=pid,
        bench=BENCH,
        title=row["title"],
        statement=row["description"],
        kind="stdin",
        time_limit_s=row["time_limit"] / 1000,
        memory_limit_mb=int(row["memory_limit"]),
        checker="special" if checker else "exact",
        checker_source=checker,
        platform="codecontests+",
    )
    cases = sorted(row["test_cases"], key=lambda c: len(c["input"]))
    tests = [
        Test(
            problem_id=pid,
            idx=i,
            input=c["input"],
            output=c["output"],
            input_len=len(c["input"]),
            tier=tier_of(len(c["input"])),
        )
        for i, c in enumerate(cases)
    ]
    return problem, tests
