"""LiveCodeBench `code_generation_lite` from local files: `test.jsonl`, `test2.jsonl`, … `test6.jsonl`
(release versions v1…v6), or a local Hugging Face datasets folder (`save_to_disk`).

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
from dataclasses import dataclass
from pathlib import Path

from backend.errors import UserError
from backend.records import Problem, Test, tier_of

BENCH = "lcb"
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


@dataclass
class LCBFilter:
    version: str = "v6"  # cumulative release (v1…v6) or a range such as v5_v6
    since: str | None = None  # contest_date window, ISO dates
    until: str | None = None
    difficulty: str | None = None
    platform: str | None = None

    def files(self) -> list[str]:
        match = re.fullmatch(r"(?:release_)?v(\d)(?:_v(\d))?", self.version)
        if not match:
            raise UserError(f"bad LiveCodeBench version {self.version!r}; use v1…v6 (cumulative) or a range like v5_v6")
        lo, hi = (int(match[1]), int(match[2])) if match[2] else (1, int(match[1]))
        return ["test.jsonl" if k == 1 else f"test{k}.jsonl" for k in range(lo, hi + 1)]

    def keeps(self, row: dict) -> bool:
        date = str(row.get("contest_date") or "")[:10]
        return not (
            (self.since and date < self.since)
            or (self.until and date >= self.until)
            or (self.difficulty and row.get("difficulty") != self.difficulty)
            or (self.platform and row.get("platform") != self.platform)
        )


REQUIRED = ("question_title", "question_content", "platform", "question_id", "public_test_cases", "private_test_cases")


def read_rows(path: Path, flt: LCBFilter) -> list[tuple[str, int, dict]]:
    """(file, line, row) for every row of the selected release files (or the datasets folder)."""
    if (path / "dataset_info.json").is_file() or (path / "state.json").is_file():
        import datasets

        return [(str(path), i + 1, row) for i, row in enumerate(datasets.load_from_disk(str(path)))]
    files = [path / name for name in flt.files()] if path.is_dir() else [path]
    missing = [f for f in files if not f.is_file()]
    if missing:
        raise UserError(f"{missing[0]} not found; LiveCodeBench {flt.version} needs {', '.join(flt.files())} in {path}")
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
        id=pid, bench=BENCH, title=row["question_title"], statement=row["question_content"],
        kind="functional" if functional else "stdin", starter_code=row.get("starter_code") or None,
        func_name=metadata.get("func_name"), difficulty=row.get("difficulty"), platform=row["platform"],
        contest_date=str(row.get("contest_date") or "") or None, time_limit_s=6.0, memory_limit_mb=1024,
        checker="functional" if functional else "exact", tags=[f"contest:{row.get('contest_id', '')}"],
    )  # fmt: skip
    if functional and not problem.func_name:
        raise ValueError("functional tests but no func_name in metadata")
    ordered = sorted(cases, key=lambda cp: len(cp[0]["input"]))
    tests = [
        Test(problem_id=pid, idx=i, input=c["input"], output=c["output"], input_len=len(c["input"]),
             tier=tier_of(len(c["input"])), is_public=pub)
        for i, (c, pub) in enumerate(ordered)
    ]  # fmt: skip
    return problem, tests
