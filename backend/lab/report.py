"""The lab's findings report: the four findings of backend/analysis/findings.py on the lab's
sweep, the same code `analyze findings` and the Overview run on any experiment."""

from __future__ import annotations

import json
from pathlib import Path

from backend.analysis.findings import FindingsSpec, findings
from backend.analysis.findings_text import findings_table


def subsets(manifest: dict) -> dict[str, list[str]]:
    """The problem sets the findings are reported on, apart: every held-in problem, the held-in
    ones that separate fast from slow code (builds that measured it), and the held-out ones."""
    held_in, separating = manifest["held_in"], set(manifest.get("separating") or [])
    found = {
        "held-in": held_in,
        "separating": [p for p in held_in if p in separating],
        "held-out": manifest["held_out"],
    }
    return {name: ids for name, ids in found.items() if ids}


def findings_by_subset(counts, sets: dict[str, list[str]], seed: int = 0) -> dict[str, list[dict]]:
    """The four findings on each problem set that the sweep evaluated (`counts`: outcome counts)."""
    import polars as pl

    from backend.analysis.frame import to_outcomes

    out = {}
    for name, ids in sets.items():
        mine = counts.filter(pl.col("problem_id").is_in(ids))
        if not mine.is_empty():
            out[name] = findings(to_outcomes(mine), FindingsSpec(seed=seed))
    return out


def subsets_markdown(report: dict[str, list[dict]], sets: dict[str, list[str]]) -> str:
    return "\n\n".join(
        f"### {name} ({len(sets[name])} problems)\n\n{findings_table(rows)}" for name, rows in report.items()
    )


def lab_experiment(store, manifest_folder: Path | None = None) -> str | None:
    """The lab's sweep experiment when the lab is in this database, else None."""
    from backend.lab.artifacts import ARTIFACTS

    manifest = (manifest_folder or ARTIFACTS) / "recipe.json"
    if not manifest.is_file():
        return None
    experiment = json.loads(manifest.read_text())["sweep_experiment"]
    return None if store.outcome_counts(experiment).is_empty() else experiment


def reward_disagreement(steps: list[dict[str, float]], a: str, b: str) -> float:
    """The share of a GRPO run's rollouts that binary rewards `a` and `b` score differently, from
    its per-step metrics (`pass_R_k`: the share of the step's rollouts that R_k passes). The
    binary rewards pass nested sets (R_k passes every test shorter than 10^k, R_inf every test),
    so a rollout is scored differently exactly when it is in the larger set and not the smaller:
    |pass_a - pass_b| per step. Every step logs one batch of the same size, so the run's share is
    the steps' mean."""
    diffs = [abs(step[f"pass_{a}"] - step[f"pass_{b}"]) for step in steps if f"pass_{a}" in step]
    return sum(diffs) / len(diffs) if diffs else float("nan")
