"""LiveCodeBench `code_generation_lite` from local files: `test.jsonl`, `test2.jsonl`, … `test6.jsonl`
(one file per release), or a local Hugging Face datasets folder (`save_to_disk`).

Versions mean what they mean in LCB's dataset script: `vN` is release N's file alone,
`release_vN` releases 1…N, `release_latest` every release, `vN_vM` releases N…M.

Private tests are JSON, or base64 → zlib → pickle → JSON. The pickle comes from a dataset, so it
is opened with a restricted unpickler that only builds plain data; anything that names a class
or function (how a malicious pickle runs code) is refused before it can run.
"""

from __future__ import annotations

import base64
import io
import json
import pickle
import re
import zlib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from backend.errors import UserError
from backend.records import Problem, Test, tier_of
from backend.vocab import Difficulty

BENCH = "lcb"
TIME_LIMIT_S = 6.0  # LCB's per-test timeout, applied as CPU time (LCB's alarm is wall time)
SAFE_GLOBALS = {("builtins", n) for n in ("str", "bytes", "list", "dict", "int", "float", "bool", "NoneType")}


class _DataOnly(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if (module, name) in SAFE_GLOBALS:
            return super().find_class(module, name)
        raise UserError(f"refused an unsafe pickle that references {module}.{name}; only plain data may be unpickled")


def safe_unpickle(data: bytes):
    return _DataOnly(io.BytesIO(data)).load()


def decode_private_tests(text: str) -> list[dict]:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    try:
        raw = zlib.decompress(base64.b64decode(text.encode()))
    except (ValueError, zlib.error) as exc:
        raise UserError(f"private_test_cases is neither JSON nor base64/zlib data: {exc}") from exc
    payload = safe_unpickle(raw)
    return json.loads(payload) if isinstance(payload, str | bytes) else payload


RELEASES = 6
VERSIONS_HELP = "v1…v6 (one release each), release_v1…release_v6 (cumulative), release_latest, or vN_vM (N ≤ M)"


def release_numbers(version: str) -> list[int]:
    """The releases a version names, as LCB's dataset script selects them."""
    if version == "release_latest":
        return list(range(1, RELEASES + 1))
    cumulative = re.fullmatch(r"release_v([1-9]\d*)", version)
    interval = re.fullmatch(r"v([1-9]\d*)(?:_v([1-9]\d*))?", version)
    if cumulative and int(cumulative[1]) <= RELEASES:
        return list(range(1, int(cumulative[1]) + 1))
    if interval:
        lo, hi = int(interval[1]), int(interval[2] or interval[1])
        if lo <= hi <= RELEASES:
            return list(range(lo, hi + 1))
    raise UserError(f"unknown LiveCodeBench version {version!r}; valid: {VERSIONS_HELP}")


# The months each release's problems were published in, as LiveCodeBench's README defines its versions
# ("Dataset Versions": release_vN holds problems released between May 2023 and the month below;
# github.com/LiveCodeBench/LiveCodeBench, README.md at commit 28fef95, 2025-07-15). Release N alone (vN)
# starts the month after release N − 1 ends.
FIRST_MONTH = "2023-05"
RELEASE_LAST_MONTH = {1: "2024-03", 2: "2024-05", 3: "2024-07", 4: "2024-09", 5: "2025-01", 6: "2025-04"}
NAMED_WINDOWS = tuple(f"release_v{n}" for n in range(1, RELEASES + 1)) + tuple(f"v{n}" for n in range(1, RELEASES + 1))


def release_window(version: str) -> tuple[str, str]:
    """(since, until), both included, as YYYY-MM-DD: the contest dates a LiveCodeBench version covers
    (release_v5: 2023-05-01 … 2025-01-31; v6: 2025-02-01 … 2025-04-30)."""
    import calendar

    numbers = release_numbers(version)
    lo, hi = numbers[0], numbers[-1]
    start = FIRST_MONTH if lo == 1 else _next_month(RELEASE_LAST_MONTH[lo - 1])
    year, month = map(int, RELEASE_LAST_MONTH[hi].split("-"))
    return f"{start}-01", f"{RELEASE_LAST_MONTH[hi]}-{calendar.monthrange(year, month)[1]:02d}"


def window_name(since: str | None, until: str | None) -> str | None:
    """The LiveCodeBench version whose window is exactly [since, until], if one is."""
    return next((v for v in NAMED_WINDOWS if release_window(v) == (since, until)), None)


def _next_month(month: str) -> str:
    year, m = map(int, month.split("-"))
    return f"{year + m // 12}-{m % 12 + 1:02d}"


def release_file(n: int) -> str:
    return "test.jsonl" if n == 1 else f"test{n}.jsonl"


class LCBFilter(BaseModel):
    """`problems import lcb` and the Launch page's import: which LiveCodeBench problems to import."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    version: str | None = Field(None, title="LiveCodeBench version", json_schema_extra={"none": "all the source holds"})
    """v1…v6 (one release each), release_v1…release_v6 (cumulative), release_latest, or vN_vM (N ≤ M);
    none: what the source holds (a JSONL folder: release_latest, LCB's own default)."""
    since: str | None = Field(None, title="Since (YYYY-MM-DD)")
    """contest_date ≥ this date (included, as in LCB)."""
    until: str | None = Field(None, title="Until (YYYY-MM-DD)")
    """contest_date ≤ this date (included, as in LCB)."""
    split: str = Field("test", title="Split")
    """The split to read from a save_to_disk DatasetDict (LCB publishes one: test)."""
    difficulty: Difficulty | None = Field(None, title="Difficulty", json_schema_extra={"none": "all"})
    """Only problems of this difficulty; none: all of them."""
    platform: str | None = Field(None, title="Platform", json_schema_extra={"none": "all"})
    """Only problems from this platform (LiveCodeBench's atcoder, codeforces, leetcode); none: all."""

    def __init__(self, version: str | None = None, **kw):  # LCBFilter("release_v2"), as the version is what one names
        super().__init__(version=version, **kw)

    def releases(self) -> list[int]:
        return release_numbers(self.version or "release_latest")

    def files(self) -> list[str]:
        return [release_file(n) for n in self.releases()]

    def keeps(self, row: dict) -> bool:
        date = str(row.get("contest_date") or "")[:10]
        return not (
            (self.since and date < self.since)
            or (self.until and date > self.until[:10])
            or (self.difficulty and row.get("difficulty") != self.difficulty)
            or (self.platform and row.get("platform") != self.platform)
        )


REQUIRED = ("question_title", "question_content", "platform", "question_id", "public_test_cases", "private_test_cases")


def read_rows(path: Path, flt: LCBFilter) -> list[tuple[str, int, dict]]:
    """(file, line, row) for every row of the selected release files (or the datasets folder)."""
    if (
        (path / "dataset_info.json").is_file()
        or (path / "state.json").is_file()
        or (path / "dataset_dict.json").is_file()
    ):
        return _saved_rows(path, flt)
    files = [path / name for name in flt.files()] if path.is_dir() else [path]
    missing = [f for f in files if not f.is_file()]
    if missing:
        present = [n for n in range(1, RELEASES + 1) if (path / release_file(n)).is_file()]
        hint = f"; this folder has releases {present}, e.g. --version release_v{max(present)}" if present else ""
        version = flt.version or "release_latest"
        raise UserError(
            f"{missing[0]} not found: LiveCodeBench {version} needs {', '.join(f.name for f in files)}{hint}"
        )
    rows = []
    for f in files:
        for n, line in enumerate(f.read_text().splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rows.append((f.name, n, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise UserError(f"{f}:{n}: not a JSON line ({exc.msg})") from exc
    return rows


def _saved_rows(path: Path, flt: LCBFilter) -> list[tuple[str, int, dict]]:
    """A `save_to_disk` folder: one split, or a DatasetDict (`flt.split`). Its rows carry no
    release file, so a version is honoured only through the version the folder was saved with
    (`dataset_info.json`'s config name), never silently dropped."""
    import datasets

    data = datasets.load_from_disk(str(path))
    if isinstance(data, datasets.DatasetDict):
        if flt.split not in data:
            raise UserError(f"{path} has splits {', '.join(data)}, not {flt.split!r}; pass --split")
        data = data[flt.split]
    saved = getattr(data.info, "config_name", None) or ""
    if flt.version is not None:
        try:
            same = saved and release_numbers(saved) == flt.releases()
        except UserError:
            same = False
        if not same:
            raise UserError(
                f"{path} holds LiveCodeBench {saved or '(version not recorded)'} and its rows do not say which release "
                f"they come from, so {flt.version} cannot be taken from it; leave out --version to import all of it, "
                "or point at the test*.jsonl files"
            )
    return [(str(path), i + 1, row) for i, row in enumerate(data)]


def load(path: str | Path, flt: LCBFilter | None = None) -> list[tuple[Problem, list[Test]]]:
    """Every matching problem with its public and private tests. Nothing is returned unless
    every row parses: a bad row raises with its file and line."""
    flt = flt or LCBFilter()
    out = []
    for name, line, row in read_rows(Path(path), flt):
        missing = [k for k in REQUIRED if k not in row]
        if missing:
            raise UserError(f"{name}:{line}: missing field {missing[0]!r}")
        if not flt.keeps(row):
            continue
        try:
            out.append(_to_records(row))
        except (KeyError, TypeError, ValueError) as exc:
            raise UserError(f"{name}:{line}: malformed test cases ({exc})") from exc
    return out


def _to_records(row: dict) -> tuple[Problem, list[Test]]:
    metadata = row.get("metadata") or "{}"
    metadata = json.loads(metadata) if isinstance(metadata, str) else metadata
    public = (
        json.loads(row["public_test_cases"]) if isinstance(row["public_test_cases"], str) else row["public_test_cases"]
    )
    private = decode_private_tests(row["private_test_cases"]) if row["private_test_cases"] else []
    cases = [(c, True) for c in public] + [(c, False) for c in private]
    functional = any(c.get("testtype") == "functional" for c, _ in cases)
    pid = f"{BENCH}/{row['question_id']}"
    problem = Problem(
        id=pid,
        bench=BENCH,
        title=row["question_title"],
        statement=row["question_content"],
        kind="functional" if functional else "stdin",
        starter_code=row.get("starter_code") or None,
        func_name=metadata.get("func_name"),
        difficulty=row.get("difficulty"),
        platform=row["platform"],
        contest_date=str(row.get("contest_date") or "") or None,
        time_limit_s=TIME_LIMIT_S,
        memory_limit_mb=1024,
        checker="functional" if functional else "lcb",
        tags=[f"contest:{row.get('contest_id', '')}"],
    )
    if functional and not problem.func_name:
        raise ValueError("functional tests but no func_name in metadata")
    ordered = sorted(cases, key=lambda cp: len(cp[0]["input"]))
    tests = [
        Test(
            problem_id=pid,
            idx=i,
            input=c["input"],
            output=c["output"],
            input_len=len(c["input"]),
            tier=tier_of(len(c["input"])),
            is_public=pub,
        )
        for i, (c, pub) in enumerate(ordered)
    ]
    return problem, tests
