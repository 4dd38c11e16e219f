"""Reading a file of samples made elsewhere, whole, before anything is stored: our JSONL (one sample a
line) or LiveCodeBench's custom_evaluator JSON as its harness takes it (LiveCodeBench's
lcb_runner/runner/custom_evaluator.py: a list of {"question_id", "code_list"}, code_list the
extracted programs of that question). Every malformed line and every duplicate is reported in one
line, with line numbers (entry numbers in a JSON list); nothing of a bad file reaches the database."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from backend.errors import UserError
from backend.vocab import SETTINGS

SHOWN = 5  # problems or lines a refusal names before it says how many more
LCB_BENCH = "lcb"


@dataclass(frozen=True)
class Row:
    """One sample of the file, where it was (line, or entry of a JSON list)."""

    line: int
    problem_id: str
    checkpoint: str
    sample_idx: int | None
    setting: str
    completion: str | None = None  # the model's answer: the code is extracted from it
    code: str | None = None  # the program itself
    alpha: float | None = None
    low: str | None = None
    high: str | None = None

    @property
    def source(self) -> tuple:
        """Which checkpoint the sample came from: the name, and an α point's α and endpoints."""
        return (self.checkpoint, self.alpha, self.low, self.high)


@dataclass(frozen=True)
class SampleFile:
    path: Path
    format: str  # jsonl | lcb
    digest: str  # sha256 of the file's bytes
    rows: list[Row]

    @property
    def described(self) -> str:
        kind = "LiveCodeBench custom_evaluator JSON" if self.format == "lcb" else "JSONL"
        return f"{self.path.name} ({kind}, sha256 {self.digest[:12]})"


def listed(items: list, sep: str = ", ") -> str:
    """The first SHOWN items, and how many more."""
    return sep.join(map(str, items[:SHOWN])) + (f"{sep}… {len(items) - SHOWN} more" if len(items) > SHOWN else "")


def read(path: str | Path, fmt: str = "auto", checkpoint: str | None = None, setting: str = "reasoning") -> SampleFile:
    path = Path(path).expanduser()
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}") from None
    text = raw.decode("utf-8", errors="replace")
    whole = _json(text)
    if fmt == "auto":
        fmt = "lcb" if isinstance(whole, list) and (not whole or isinstance(whole[0], (dict, list))) else "jsonl"
    rows = _lcb(path, whole, checkpoint, setting) if fmt == "lcb" else _jsonl(path, text, setting)
    if not rows:
        raise UserError(f"{path.name} holds no samples")
    _no_duplicates(path, rows, "entries" if fmt == "lcb" else "lines")
    return SampleFile(path, fmt, hashlib.sha256(raw).hexdigest(), rows)


def _json(text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


def _lcb(path: Path, whole, checkpoint: str | None, setting: str) -> list[Row]:
    if not isinstance(whole, list):
        raise UserError(
            f'{path.name} is not LiveCodeBench custom_evaluator JSON: expected a list of {{"question_id", "code_list"}}'
        )
    if whole and isinstance(whole[0], list):
        raise UserError(
            f"{path.name}: the list-of-lists form of custom_evaluator follows LiveCodeBench's benchmark order, "
            'which the file does not carry; write [{"question_id": ..., "code_list": [...]}]'
        )
    if not (checkpoint or "").strip():
        raise UserError(
            f"{path.name} is LiveCodeBench custom_evaluator JSON, which names no checkpoint: give --checkpoint"
        )
    rows, bad = [], []
    for n, entry in enumerate(whole, start=1):
        qid = entry.get("question_id") if isinstance(entry, dict) else None
        codes = entry.get("code_list") if isinstance(entry, dict) else None
        if qid is None or not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
            bad.append(f'entry {n}: expected {{"question_id": str, "code_list": [str, ...]}}')
            continue
        pid = f"{LCB_BENCH}/{qid}"
        rows += [Row(n, pid, checkpoint.strip(), k, setting, code=code) for k, code in enumerate(codes)]
    if bad:
        raise UserError(
            f"{path.name}: {len(bad)} malformed entr{'y' if len(bad) == 1 else 'ies'}, nothing imported: "
            + listed(bad, "; ")
        )
    return rows


def _jsonl(path: Path, text: str, setting: str) -> list[Row]:
    rows, bad = [], []
    seen: dict[tuple, int] = {}  # (source, problem) → lines so far: the default sample_idx
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = _row(n, json.loads(line), setting)
        except json.JSONDecodeError as exc:
            bad.append(f"line {n}: not JSON ({exc.msg})")
            continue
        except ValueError as exc:
            bad.append(f"line {n}: {exc}")
            continue
        group = (row.source, row.problem_id)
        if row.sample_idx is None:
            row = Row(**{**row.__dict__, "sample_idx": seen.get(group, 0)})
        seen[group] = seen.get(group, 0) + 1
        rows.append(row)
    if bad:
        raise UserError(f"{path.name}: {len(bad)} malformed line(s), nothing imported: {listed(bad, '; ')}")
    return rows


def _row(n: int, obj, default_setting: str) -> Row:
    """One JSONL line as a Row; ValueError says what is wrong with it."""
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    for name in ("problem_id", "checkpoint"):
        if not isinstance(obj.get(name), str) or not obj[name].strip():
            raise ValueError(f"{name!r} is missing (a string)")
    has = [k for k in ("completion", "code") if obj.get(k) is not None]
    if len(has) != 1 or not isinstance(obj[has[0]], str):
        raise ValueError("give one of 'completion' (the answer, code extracted from it) or 'code' (a string)")
    setting = obj.get("setting", default_setting)
    if setting not in SETTINGS:
        raise ValueError(f"setting {setting!r} is not one of {', '.join(SETTINGS)}")
    idx = obj.get("sample_idx")
    if idx is not None and (not isinstance(idx, int) or isinstance(idx, bool) or idx < 0):
        raise ValueError("sample_idx must be an integer ≥ 0")
    alpha, low, high = obj.get("alpha"), obj.get("low"), obj.get("high")
    if alpha is not None:
        if not isinstance(alpha, (int, float)) or isinstance(alpha, bool):
            raise ValueError("alpha must be a number")
        if not (isinstance(low, str) and low.strip() and isinstance(high, str) and high.strip()):
            raise ValueError("alpha needs 'low' and 'high', the checkpoints it interpolates")
    elif low is not None or high is not None:
        raise ValueError("'low' and 'high' go with 'alpha'")
    return Row(
        n, obj["problem_id"].strip(), obj["checkpoint"].strip(), idx, setting, obj.get("completion"), obj.get("code"),
        None if alpha is None else float(alpha), low, high,
    )  # fmt: skip


def _no_duplicates(path: Path, rows: list[Row], unit: str) -> None:
    """A sample named twice (JSONL: its checkpoint, problem and sample_idx; custom_evaluator: a question in
    two entries)."""
    first: dict[tuple, int] = {}
    clashes: list[str] = []
    for r in rows:
        key = (r.source, r.problem_id) if unit == "entries" else (r.source, r.problem_id, r.sample_idx)
        where = first.setdefault(key, r.line)
        if where != r.line:
            what = r.problem_id if unit == "entries" else f"{r.problem_id} sample {r.sample_idx} of {r.checkpoint}"
            clash = f"{what} ({unit} {where} and {r.line})"
            if clash not in clashes:
                clashes.append(clash)
    if clashes:
        raise UserError(f"{path.name}: {len(clashes)} duplicate sample(s), nothing imported: {listed(clashes, '; ')}")
