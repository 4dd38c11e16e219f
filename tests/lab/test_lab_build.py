"""`lab build --smoke` end to end (real SFT, real GRPO, a real sweep job judged in the sandbox),
then `lab import` into a fresh database and `lab report` on it; and the committed artifacts import."""

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from backend.lab.artifacts import ARTIFACTS
from backend.lab.recipe import LabRecipe
from backend.problems.builtin import get
from backend.records import Checkpoint, Evaluation, Experiment, Metric, Problem, Sample
from backend.store import Store
from tests.by_hand import solved_pairs
from tests.conftest import run_cli


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("lab") / "lab-smoke"
    result = run_cli("lab", "build", "--smoke", "--out", str(out), "--quiet", timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    return out, result.stdout


@pytest.mark.slow
def test_smoke_build_produces_every_kind_of_row(smoke):
    out, stdout = smoke
    recipe = LabRecipe.smoke()
    manifest = json.loads((out / "recipe.json").read_text())
    assert manifest["recipe"] == recipe.to_dict() and not (out.parent / "lab-smoke.building").exists()
    problems = len(manifest["held_in"])
    assert problems == len(recipe.only)  # the smoke recipe holds nothing out
    # each problem's own limit, 3x its reference's worst CPU time with a 0.05 s floor, and the
    # separation check under it (the smoke recipe calibrates, as the third design does)
    reports = manifest["problems"]
    assert set(reports) == set(manifest["held_in"]) and "limits and separation" in manifest["timings_s"]
    for report in reports.values():
        assert report["limit_s"] == round(max(0.05, 3 * report["reference_cpu_s"]), 3)
        assert report["separating"] == (not report["reasons"])
        assert 0 <= report["brute_large_sized"] <= report["brute_large_tle"] <= 3  # three tier-5 tests
        # as the rewards see it: each variant's first failing tier, never above its highest failing one
        assert len(report["buggy_first_fail_tiers"]) == len(report["buggy_fail_tiers"])
        for first, highest in zip(report["buggy_first_fail_tiers"], report["buggy_fail_tiers"], strict=True):
            assert highest is None or (first is not None and first <= highest)
        assert report["brute_first_fail_tier"] is None or report["brute_first_fail_tier"] >= 1
    assert manifest["separating"] == sorted(pid for pid, r in reports.items() if r["separating"])
    samples = pq.read_table(out / "results" / "samples.parquet").to_pylist()
    per_point = {}
    for s in samples:
        per_point[s["checkpoint_id"]] = per_point.get(s["checkpoint_id"], 0) + 1
    assert len(per_point) == len(recipe.sweep["alphas"]) + 1  # every α and the SFT overlay
    assert set(per_point.values()) == {problems * recipe.sweep["n"]}
    evaluations = pq.read_table(out / "results" / "evaluations.parquet")
    assert evaluations.num_rows == len(samples)
    assert set(evaluations.column("outcome").to_pylist()) <= {
        "correct",
        "optimization_failure",
        "correctness_failure",
        "format_failure",
    }
    kinds = {e["id"]: e["kind"] for e in pq.read_table(out / "results" / "experiments.parquet").to_pylist()}
    assert sorted(kinds.values()) == ["rl", "rl", "sweep"]
    metric_runs = set(pq.read_table(out / "results" / "metrics.parquet").column("experiment_id").to_pylist())
    assert metric_runs == {k for k, v in kinds.items() if v == "rl"}
    for name in ("sft", "low", "high"):
        assert (out / "checkpoints" / name / "model.safetensors").is_file()
    # the SFT mix each problem drew: sum(weights) prompted rows per epoch
    difficulty = {pid: get(pid.split("/", 1)[1]).module.DIFFICULTY for pid in manifest["held_in"]}
    assert {pid: sum(kinds.values()) for pid, kinds in manifest["sft"]["mix"].items()} == {
        pid: recipe.sft_epochs * sum(recipe.mix_for(d).values()) for pid, d in difficulty.items()
    }
    # the withheld half of the separating held-in problems
    # is taught no reference program, in as many rows; the kept half keeps its mix
    separating = [pid for pid in manifest["held_in"] if pid in manifest["separating"]]
    withheld, kept = manifest.get("withheld", []), manifest.get("kept", [])
    assert sorted(withheld + kept) == sorted(separating) and len(withheld) == len(separating) // 2
    assert all(manifest["sft"]["mix"][pid].get("reference", 0) == 0 for pid in withheld)
    # the findings, apart on each problem set: all held-in problems, the separating ones, then the two halves
    report = json.loads((out / "report.json").read_text())
    assert list(report) == ["held-in", *(["separating", "withheld", "kept"] if len(separating) > 1 else [])]
    assert all(
        [r["finding"] for r in rows] == ["frontier", "extrapolation", "churn", "ensemble"] for rows in report.values()
    )
    assert "| finding |" in stdout and (out / "report.md").read_text().startswith(f"### held-in ({problems} problems)")


@pytest.mark.slow
def test_lab_targets_reports_the_first_failing_tiers_and_the_withheld_set_tests(smoke):
    """bench/lab_targets.py on a build with a withheld set: the per-problem first failing tiers the
    build recorded, n on the withheld set, and the pre-registered tests with their statuses."""
    import subprocess
    import sys

    out, _ = smoke
    manifest = json.loads((out / "recipe.json").read_text())
    done = subprocess.run([sys.executable, "bench/lab_targets.py", "--artifacts", str(out)], capture_output=True,
                          text=True, timeout=600, cwd=Path(__file__).resolve().parents[2])  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    text = done.stdout
    assert "first failing tier of the failing held-in samples" in text and "(recorded by the build)" in text
    for pid in manifest["problems"]:
        assert re.search(rf"^  {re.escape(pid)} +(\d|-) / ", text, re.M), pid
    if manifest.get("withheld"):
        n = LabRecipe.smoke().sweep["n"]
        assert f"withheld set: {len(manifest['withheld'])} problems, kept set {len(manifest['kept'])}" in text
        assert f"at least {n} (target ≥ 16: {'met' if n >= 16 else 'NOT met'})" in text
        statuses = "shows|does_not_show|underpowered|not_tested"
        assert re.search(rf"^  T2 withheld − kept: difference-in-differences of the correctness-failure change: "
                         rf"({statuses}); ", text, re.M)  # fmt: skip
        # the frontier's parts on each set: flatness marked trivially met on the withheld set alone
        assert len(re.findall(rf"^  \(?T1[abc]\)? (withheld|kept): .+: ({statuses}); ", text, re.M)) == 5
        assert len(re.findall(r"^  T1c withheld: solve rate .*: trivially met; ", text, re.M)) == 1
    else:
        assert "not tested, this build has no withheld set" in text


@pytest.mark.slow
def test_import_into_a_fresh_database_and_report(smoke, tmp_path):
    out, _ = smoke
    db = tmp_path / "fresh.duckdb"
    result = run_cli("lab", "import", "--from", str(out), "--db", str(db))
    assert result.returncode == 0, result.stderr[-2000:]
    store = Store(db)
    manifest = json.loads((out / "recipe.json").read_text())
    sweep = manifest["sweep_experiment"]
    assert store.get(Experiment, sweep).status == "done"
    assert store.count(Sample, {"experiment_id": sweep}) == manifest["rows"]["samples"]
    assert store.count(Evaluation, {"experiment_id": sweep}) == manifest["rows"]["evaluations"]
    assert (
        sum(store.count(Metric, {"experiment_id": e}) for e in manifest["rl_experiments"])
        == manifest["rows"]["metrics"]
    )
    # pointed into this folder (two smoke RL steps may leave the weights, and so the id, unchanged)
    sft = store.get(Checkpoint, manifest["sft_checkpoint"])
    assert sft.path.rsplit("/", 1)[0] == str(out.resolve() / "checkpoints")
    merged = [c for c in store.select(Checkpoint) if c.alpha is not None]
    assert len(merged) == len(LabRecipe.smoke().sweep["alphas"])
    assert all(c.path.startswith(f"live:{out.resolve()}/checkpoints/low|") for c in merged)
    assert {p.id: p.time_limit_s for p in store.select(Problem)} == {
        pid: r["limit_s"] for pid, r in manifest["problems"].items()
    }
    report = run_cli("lab", "report", "--from", str(out), "--db", str(db), "--json")
    assert report.returncode == 0, report.stderr[-2000:]
    rows = json.loads(report.stdout)
    assert [r["finding"] for r in rows] == ["frontier", "extrapolation", "churn", "ensemble"]
    assert {r["status"] for r in rows} <= {"shows", "does_not_show", "underpowered", "not_tested"}
    # on the separating problems alone: the build's own report for that set, recomputed from the store
    if manifest["separating"]:
        mine = run_cli("lab", "report", "--from", str(out), "--db", str(db), "--json", "--subset", "separating")
        assert mine.returncode == 0, mine.stderr[-2000:]
        built = json.loads((out / "report.json").read_text())["separating"]
        assert [(r["status"], r["statistic"]) for r in json.loads(mine.stdout)] == [
            (r["status"], r["statistic"]) for r in built
        ]
    if manifest.get("withheld"):  # the fourth design's halves, as the build reported them
        half = run_cli("lab", "report", "--from", str(out), "--db", str(db), "--json", "--subset", "withheld")
        assert half.returncode == 0, half.stderr[-2000:]
        built = json.loads((out / "report.json").read_text())["withheld"]
        assert [r["status"] for r in json.loads(half.stdout)] == [r["status"] for r in built]
    missing = run_cli("lab", "report", "--from", str(out), "--db", str(db), "--subset", "held-out")
    assert missing.returncode == 2 and "this lab has no held-out problems" in missing.stderr


@pytest.mark.slow
def test_import_stores_the_recorded_limits_without_measuring_again(smoke, tmp_path):
    out, _ = smoke
    copy = tmp_path / "lab"
    shutil.copytree(out, copy)
    manifest = json.loads((copy / "recipe.json").read_text())
    pid = manifest["held_in"][0]
    manifest["problems"][pid]["limit_s"] = 0.777  # no reference needs this: only the record says it
    (copy / "recipe.json").write_text(json.dumps(manifest))
    db = tmp_path / "fresh.duckdb"
    result = run_cli("lab", "import", "--from", str(copy), "--db", str(db))
    assert result.returncode == 0, result.stderr[-2000:]
    assert Store(db).get(Problem, pid).time_limit_s == 0.777


@pytest.mark.slow
@pytest.mark.skipif(not (ARTIFACTS / "recipe.json").is_file(), reason="no committed lab artifacts")
def test_committed_lab_artifacts_import(tmp_path):
    db = tmp_path / "fresh.duckdb"
    result = run_cli("lab", "import", "--db", str(db), timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    manifest = json.loads((ARTIFACTS / "recipe.json").read_text())
    store = Store(db)
    assert store.count(Sample, {"experiment_id": manifest["sweep_experiment"]}) == manifest["rows"]["samples"]
    # committed results come from the fourth design, as docs/lab.md describes it: LabRecipe() with its
    # withheld set, each problem judged under the limit its separation stage recorded
    assert LabRecipe.from_dict(manifest["recipe"]) == LabRecipe()
    separating = [pid for pid in manifest["held_in"] if pid in manifest["separating"]]
    assert sorted(manifest["withheld"] + manifest["kept"]) == sorted(separating)
    recorded = {pid: report["limit_s"] for pid, report in manifest["problems"].items()}
    assert {p.id: p.time_limit_s for p in store.select(Problem)} == recorded
    assert manifest["separating"] == [pid for pid, report in manifest["problems"].items() if report["separating"]]
    assert len(manifest["separating"]) >= 12 and set(manifest["held_in"]) | set(manifest["held_out"]) == set(recorded)
    churn = run_cli("analyze", "churn", "--experiment", manifest["sweep_experiment"], "--db", str(db), "--json")
    assert churn.returncode == 0, churn.stderr[-2000:]
    stats = json.loads(churn.stdout)
    assert (stats["union_solved"], stats["best_single"]["solved"]) == recount_solved(
        store, manifest["sweep_experiment"]
    )
    committed = json.loads((ARTIFACTS / "report.json").read_text())
    for subset in ("held-in", "separating"):  # recomputed from the database: the committed report's rows
        report = run_cli("lab", "report", "--db", str(db), "--subset", subset, "--json")
        assert report.returncode == 0, report.stderr[-2000:]
        rows = json.loads(report.stdout)
        assert [(r["finding"], r["status"]) for r in rows] == [(r["finding"], r["status"]) for r in committed[subset]]
        assert [r["statistic"] for r in rows] == pytest.approx([r["statistic"] for r in committed[subset]])
        # as docs/lab.md reports for build H: optimization failures fall and correctness failures rise
        # from θ_low to θ_high, but the solve rate rises too, so its flatness is not shown (underpowered)
        frontier = rows[0]
        assert frontier["status"] == "underpowered" and [p["status"] for p in frontier["parts"]] == [
            "shows", "shows", "underpowered"
        ]  # fmt: skip
        assert frontier["parts"][0]["statistic"] > 0.1 and frontier["parts"][1]["statistic"] > 0.1


def recount_solved(store, sweep: str) -> tuple[int, int]:
    """(union of solved problems, best single checkpoint's count) over the sweep's checkpoints (the
    SFT overlay included, as `analyze churn` counts), from the stored evaluations: solved = at
    least half the samples correct (SOLVED_AT)."""
    solved = solved_pairs(store, sweep, 0.5)
    return len({p for _, p in solved}), max(Counter(c for c, _ in solved).values(), default=0)
