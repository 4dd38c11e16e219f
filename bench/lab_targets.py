"""The miniature lab's targets (issue: lab second build), measured on the committed artifacts:

- at every α in [−0.5, 1.5], the share of samples that are broken programs (CE, or a run-time
  NameError / UnboundLocalError) — target at most 15 %;
- pass@16 of the SFT checkpoint on the held-in problems (a problem counts when any of its 16
  samples is correct) — target at least 50 % of them;
- `lab build` wall time — target at most 60 minutes on 2 cores;
- and, for the endpoints' reason to differ, the share of brute-force-style programs per α
  (backend/lab/styles.py), printed, not targeted.

    .venv/bin/python bench/lab_targets.py [--artifacts artifacts/lab]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.lab.styles import nearest, sft_sources, shape

BROKEN_ERRORS = ("NameError", "UnboundLocalError")


def broken(row: dict) -> bool:
    if row["verdict"] == "CE":
        return True
    if row["verdict"] != "RE":
        return False
    tests = json.loads(row["test_results"]) if isinstance(row["test_results"], str) else row["test_results"]
    failing = next((t for t in tests if t.get("verdict") == "RE"), {})
    return any(e in (failing.get("detail") or "") for e in BROKEN_ERRORS)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--artifacts", type=Path, default=Path("artifacts/lab"))
    folder = parser.parse_args().artifacts
    manifest = json.loads((folder / "recipe.json").read_text())
    results = folder / "results"
    checkpoints = {c["id"]: c for c in pq.read_table(results / "checkpoints.parquet").to_pylist()}
    sweep = manifest["sweep_experiment"]
    evals = [e for e in pq.read_table(results / "evaluations.parquet").to_pylist() if e["experiment_id"] == sweep]
    samples = {(s["checkpoint_id"], s["problem_id"], s["sample_idx"]): s["code"]
               for s in pq.read_table(results / "samples.parquet", columns=["experiment_id", "checkpoint_id", "problem_id", "sample_idx", "code"]).to_pylist()
               if s["experiment_id"] == sweep}  # fmt: skip
    per_point: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    styles: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    known: dict[str, dict] = {}
    for e in evals:
        point = e["checkpoint_id"]
        per_point[point]["samples"] += 1
        per_point[point]["broken"] += broken(e)
        code = samples.get((point, e["problem_id"], e["sample_idx"]))
        if e["problem_id"] not in known:
            known[e["problem_id"]] = {k: [shape(p) for p in v] for k, v in sft_sources(e["problem_id"]).items()}
        styles[point][nearest(code, known[e["problem_id"]])] += 1

    def alpha(cid: str):
        return checkpoints[cid]["alpha"]

    print(
        f"lab build {manifest['fingerprint']}: {manifest['timings_s']['total'] / 60:.1f} min on {manifest['machine']}"
    )
    print("broken programs (CE, NameError, UnboundLocalError) per α — target ≤ 15 % for α in [−0.5, 1.5]:")
    worst = 0.0
    for cid in sorted((c for c in per_point if alpha(c) is not None), key=alpha):
        share = per_point[cid]["broken"] / per_point[cid]["samples"]
        if -0.5 <= alpha(cid) <= 1.5:
            worst = max(worst, share)
        brute = styles[cid]["brute"] / per_point[cid]["samples"]
        print(f"  α = {alpha(cid):>5g}: broken {share:6.1%}   brute-force-style {brute:6.1%}")
    sft = manifest["sft_checkpoint"]
    held_in = set(manifest["held_in"])
    solved = {e["problem_id"] for e in evals if e["checkpoint_id"] == sft and e["outcome"] == "correct"}
    share = len(solved & held_in) / len(held_in)
    print(f"worst broken share in [−0.5, 1.5]: {worst:.1%} (target ≤ 15 %: {'met' if worst <= 0.15 else 'NOT met'})")
    print(
        f"SFT pass@16 on held-in problems: {share:.1%} of {len(held_in)} (target ≥ 50 %: {'met' if share >= 0.5 else 'NOT met'})"
    )
    minutes = manifest["timings_s"]["total"] / 60
    print(f"build time: {minutes:.1f} min (target ≤ 60: {'met' if minutes <= 60 else 'NOT met'})")


if __name__ == "__main__":
    main()
