"""The lab's findings report: the four findings of backend/analysis/findings.py on the lab's
sweep, the same code `analyze findings` and the Overview run on any experiment."""

from __future__ import annotations

import json
from pathlib import Path

from backend.analysis.findings import FindingsSpec, check_findings, findings_table
from backend.analysis.frame import Outcomes


def findings(o: Outcomes, seed: int = 0) -> list[dict]:
    """The four findings as JSON-ready dicts (finding, status, statistic, ci_low, ci_high, criterion, parts)."""
    return [f.to_dict() for f in check_findings(o, FindingsSpec(seed=seed))]


def to_markdown(rows: list[dict]) -> str:
    return findings_table(rows)


def lab_experiment(store, manifest_folder: Path | None = None) -> str | None:
    """The lab's sweep experiment when the lab is in this database, else None."""
    from backend.lab.artifacts import ARTIFACTS

    manifest = (manifest_folder or ARTIFACTS) / "recipe.json"
    if not manifest.is_file():
        return None
    experiment = json.loads(manifest.read_text())["sweep_experiment"]
    return None if store.outcome_counts(experiment).is_empty() else experiment
