"""Export stored problems in our own JSONL format."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from backend.errors import UserError
from backend.records import Problem, Test
from backend.store import Store


def export(store: Store, out: Path, bench: str | None = None, problem_ids: list[str] | None = None) -> int:
    """out/problems.jsonl (one problem per line, without tests) and out/tests/<bench>__<slug>.jsonl
    (one {"input", "output", "input_len", "tier", "is_public"} per line: `judge --tests` reads it)."""
    problems = store.select(Problem, {"bench": bench} if bench else None)
    if problem_ids:
        problems = [p for p in problems if p.id in set(problem_ids)]
        missing = set(problem_ids) - {p.id for p in problems}
        if missing:
            raise UserError(f"no problem {sorted(missing)[0]!r} to export")
    if not problems:
        raise UserError("nothing to export: no problem matches")
    (out / "tests").mkdir(parents=True, exist_ok=True)
    with open(out / "problems.jsonl", "w") as f:
        for p in problems:
            f.write(json.dumps(dataclasses.asdict(p)) + "\n")
            rows = store.select(Test, {"problem_id": p.id})
            with open(out / "tests" / f"{p.id.replace('/', '__')}.jsonl", "w") as t:
                for test in rows:
                    keys = ("input", "output", "input_len", "tier", "is_public")
                    t.write(json.dumps({k: getattr(test, k) for k in keys}) + "\n")
    return len(problems)
