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


def test_a_live_switch_and_a_merged_folder_share_one_row_written_once(pair, tmp_path, store):
    """The live α switch's row comes from the writer (merge/cache.register_live_switch), with the id a
    disk merge of the same spec gets; registering the merged folder afterwards keeps the row as it was."""
    from backend.merge import checkpoints
    from backend.merge.cache import MergeCache, register_live_switch, register_merged
    from backend.merge.spec import Merge
    from backend.records import Checkpoint

    low, high = (str(p) for p in pair())
    spec = Merge.at_alpha(low, high, 1.5)
    live = register_live_switch(store, low, high, spec)
    ends = [checkpoints.ensure_registered(store, p).id for p in (low, high)]
    assert (live.path, live.kind, live.label, live.alpha) == (f"live:{low}|{high}", "merged", "α=1.5", 1.5)
    assert [live.low_id, live.high_id] == ends and live.id.startswith("merged-")
    (folder,) = MergeCache(tmp_path / "cache").get([spec])
    disk = register_merged(store, folder, spec)
    assert disk == live  # the same id, and the stored row is not rewritten with the folder's path
    assert store.count(Checkpoint) == 3


def test_the_lab_import_never_rewrites_a_stored_checkpoint(tmp_path):
    """`lab import` goes through the writer: a checkpoint the database already holds keeps its row
    (label, path); the lab's other checkpoints are added with paths into the artifacts folder."""
    import pyarrow.parquet as pq

    from backend.lab.artifacts import ARTIFACTS, import_results
    from backend.merge.checkpoints import register
    from backend.records import Checkpoint
    from backend.store import Store

    committed = pq.read_table(ARTIFACTS / "results" / "checkpoints.parquet").to_pylist()
    mine = next(r for r in committed if r["kind"] == "trained")
    store = Store(tmp_path / "lab.duckdb")
    register(store, Checkpoint(id=mine["id"], path="/my/runs/sft", kind="trained", label="my SFT"))
    counts = import_results(store)
    assert counts["checkpoints"] == len(committed) == 12
    rows = {c.id: c for c in store.select(Checkpoint)}
    assert set(rows) == {r["id"] for r in committed}
    assert (rows[mine["id"]].path, rows[mine["id"]].label) == ("/my/runs/sft", "my SFT")
    others = [r for r in committed if r["id"] != mine["id"]]
    assert all(rows[r["id"]].path == r["path"].replace("{LAB}", str(ARTIFACTS.resolve())) for r in others)
    assert all(rows[r["id"]].label == r["label"] for r in others)
    import_results(store)  # again: nothing rewritten, nothing doubled
    assert {c.id: c for c in store.select(Checkpoint)} == rows
