"""The lab's committed results: tiny checkpoint folders plus Parquet tables of the rows a build
wrote, and their import into any database (what `make run` does on a fresh clone).

Paths inside rows are stored relative to the artifacts folder (`{LAB}/checkpoints/sft`), so the
import points them at wherever this clone lives.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from backend.errors import UserError
from backend.merge import checkpoints
from backend.records import Checkpoint, Evaluation, Experiment, Metric, Sample

if TYPE_CHECKING:  # `lab --help` names ARTIFACTS as a default without loading duckdb
    from backend.store import Store

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts" / "lab"
PLACEHOLDER = "{LAB}"
TABLES = {
    "experiments": Experiment,
    "checkpoints": Checkpoint,
    "samples": Sample,
    "evaluations": Evaluation,
    "metrics": Metric,
}


def export_results(store: Store, experiments: list[str], folder: Path, root: Path) -> dict[str, int]:
    """Write every row of these experiments (and the checkpoints they use) as Parquet under
    folder/results, with paths under `root` made relative."""
    import pyarrow.parquet as pq

    out = folder / "results"
    out.mkdir(parents=True, exist_ok=True)
    counts = {}
    tables = store.experiment_rows(experiments)
    for name, table in tables.items():
        table = _replace_in_strings(table, str(root), PLACEHOLDER)
        pq.write_table(table, out / f"{name}.parquet", compression="zstd")
        counts[name] = table.num_rows
    return counts


def import_results(store: Store, folder: Path = ARTIFACTS) -> dict[str, int]:
    """Load folder/results/*.parquet into the store, with paths pointing into `folder`: rows with the
    same keys are replaced, but checkpoints go through their one writer, which never rewrites a stored
    checkpoint (merge/checkpoints.py). Problems come from `lab.problems`, built from the recipe, under the
    time limits the build recorded."""
    import pyarrow.parquet as pq

    from backend.lab.problems import lab_problems, store_lab_problems, with_limits
    from backend.lab.recipe import LabRecipe

    results = folder / "results"
    if not (results / "experiments.parquet").is_file():
        raise UserError(f"no lab results in {results}; run `python -m backend lab build` first")
    manifest = json.loads((folder / "recipe.json").read_text())
    recipe = LabRecipe.from_dict(manifest["recipe"])
    limits = {pid: report["limit_s"] for pid, report in manifest.get("problems", {}).items()}
    store_lab_problems(store, with_limits(lab_problems(recipe, progress=False), limits))
    counts = {}
    for name, cls in TABLES.items():
        path = results / f"{name}.parquet"
        if path.is_file():
            table = _replace_in_strings(pq.read_table(path), PLACEHOLDER, str(folder.resolve()))
            if name == "evaluations":
                table = _classes_from_verdicts(table)
            if cls is Checkpoint:
                counts[name] = checkpoints.import_rows(store, table)
            else:
                counts[name] = store.put_arrow(cls, table, replace=True)
    return counts


def _classes_from_verdicts(table):
    """Outcome classes recomputed from the stored first failing verdict, so results written by an
    older frontier-lab (CE was then a correctness failure) import with today's classes."""
    import pyarrow as pa

    from backend.outcomes import stored_outcome

    verdicts = table.column("verdict").to_pylist()
    old = table.column("outcome").to_pylist()
    outcome = pa.array([o if v is None else stored_outcome(v) for v, o in zip(verdicts, old, strict=True)], pa.string())
    return table.set_column(table.column_names.index("outcome"), "outcome", outcome)


def _replace_in_strings(table, old: str, new: str):
    """Swap a path prefix in every string column (paths, specs, notes)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    columns = []
    for col in table.columns:
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            col = pc.replace_substring(col, old, new)
        columns.append(col)
    return pa.table(columns, names=table.column_names)
