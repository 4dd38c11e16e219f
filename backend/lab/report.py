"""The lab's findings report: the four findings of backend/analysis/findings.py on the lab's
sweep, the same code `analyze findings` and the Overview run on any experiment."""

from __future__ import annotations

import json
from pathlib import Path

from backend.analysis.findings import FindingsSpec, check_frontier, findings
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


def write_report(counts, sets: dict[str, list[str]], seed: int, folder: Path) -> dict[str, list[dict]]:
    """The findings on each problem set, written to folder/report.md and report.json: what `lab build`
    writes at its end and `lab report --write` writes again with the code of the day."""
    report = findings_by_subset(counts, sets, seed)
    (folder / "report.md").write_text(subsets_markdown(report, sets) + "\n")
    (folder / "report.json").write_text(json.dumps(report, indent=1) + "\n")
    return report


def subsets_markdown(report: dict[str, list[dict]], sets: dict[str, list[str]]) -> str:
    return "\n\n".join(
        f"### {name} ({len(sets[name])} problems)\n\n{findings_table(rows)}" for name, rows in report.items()
    )


PREREGISTERED = ("T1a", "T1b", "T1c")  # the frontier's three parts on the withheld set, in its order


def preregistered_tests(counts, manifest: dict) -> list[dict]:
    """The fourth design's pre-registered tests (docs/lab-preregistration.md, build G), one row each:
    T1a/T1b/T1c, the frontier's parts on the withheld set (T1a, T1b by the design's rule on the
    findings' CIs; T1c's flatness marked in advance as trivially met), the same parts on the kept
    set beside them, and T2, the difference-in-differences. [] for a build with no withheld set."""
    if not manifest.get("withheld"):
        return []
    import polars as pl

    from backend.analysis.did import DidSpec, difference_in_differences, endpoint_change, status_of
    from backend.analysis.frame import to_outcomes

    sets = {"withheld": manifest["withheld"], "kept": manifest["kept"]}
    spec, rows = FindingsSpec(seed=manifest["recipe"]["seed"]), []
    for name, ids in sets.items():  # the frontier finding alone: the tests need no churn or ensemble
        frontier = check_frontier(to_outcomes(counts.filter(pl.col("problem_id").is_in(ids))), spec).to_dict()
        for test, part in zip(PREREGISTERED, frontier["parts"], strict=False):  # none when not tested
            if test != "T1c":
                status = (
                    "not_tested"
                    if part["ci_low"] is None
                    else status_of(part["ci_low"], part["ci_high"], DidSpec().needed)
                )
            elif name == "withheld":
                status = "trivially met"  # pre-registered: nothing on the withheld set is expected to be solved
            else:
                status = part["status"]  # an equivalence test on the kept set: the findings' own rule
            rows.append(
                {
                    "test": test if name == "withheld" else f"({test})",
                    "set": name,
                    "what": part["name"],
                    "status": status,
                    "statistic": part["statistic"],
                    "ci_low": part["ci_low"],
                    "ci_high": part["ci_high"],
                }
            )
    o = to_outcomes(counts)
    did = difference_in_differences(endpoint_change(o, sets["withheld"]), endpoint_change(o, sets["kept"]))
    rows.append(
        {
            "test": "T2",
            "set": "withheld − kept",
            "status": did.status,
            "statistic": did.statistic,
            "what": "difference-in-differences of the correctness-failure change",
            "ci_low": did.ci_low,
            "ci_high": did.ci_high,
        }
    )
    return rows


def lab_manifest(folder: Path | None = None) -> dict | None:
    """The committed lab build's recipe.json (what it built and how), or None when there is none."""
    from backend.lab.artifacts import ARTIFACTS

    path = (folder or ARTIFACTS) / "recipe.json"
    return json.loads(path.read_text()) if path.is_file() else None


def lab_experiment(store, manifest_folder: Path | None = None) -> str | None:
    """The lab's sweep experiment when the lab is in this database, else None."""
    manifest = lab_manifest(manifest_folder)
    if manifest is None:
        return None
    experiment = manifest["sweep_experiment"]
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
