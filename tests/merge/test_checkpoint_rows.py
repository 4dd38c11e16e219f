"""Checkpoint rows have one writer (issue #48): backend/merge/checkpoints.py builds every `checkpoints`
row; no other module of backend/ constructs a records.Checkpoint."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WRITER = "backend/merge/checkpoints.py"


def builders(path: Path) -> list[int]:
    """Lines where a module calls records.Checkpoint under any name it imported it as."""
    tree = ast.parse(path.read_text())
    names = {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
             and node.module == "backend.records" for a in node.names if a.name == "Checkpoint"}  # fmt: skip
    return [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
            and n.func.id in names]  # fmt: skip


def test_only_merge_checkpoints_builds_checkpoint_rows():
    found = {str(p.relative_to(ROOT)): builders(p) for p in (ROOT / "backend").rglob("*.py")}
    assert {name for name, lines in found.items() if lines} == {WRITER}
