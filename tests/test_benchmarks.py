"""The analysis benchmark runs in CI at smoke size (its figures are printed, never asserted: timing is not
a test; the 5 M-row figures in docs/benchmarks.md come from a run without --smoke)."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def bench_script(name: str):
    """bench/<name>.py as a module (bench/ is scripts, not a package)."""
    import importlib.util

    loader = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(loader)
    sys.modules[name] = module  # while it runs: a dataclass looks its module up there
    try:
        loader.loader.exec_module(module)
    finally:
        del sys.modules[name]
    return module


@pytest.mark.slow
def test_analysis_benchmark_runs(tmp_path):
    out = subprocess.run(
        [sys.executable, "bench/analysis_speed.py", "--smoke", "--db", str(tmp_path / "bench.duckdb")],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    print(out.stdout)
    assert "SYNTHETIC data: 20 checkpoints x 60 problems x 20 samples = 24,000 rows" in out.stdout
    assert re.search(r"ratio \(pandas / ours\), total: [\d.]+x", out.stdout)


@pytest.mark.slow
def test_gpu_check_script_runs_tiny_on_cpu(tmp_path):
    """bench/gpu_check.py is the one GPU check; its tiny CPU run proves the script itself works
    (figures are printed, never asserted). The CUDA merge must write the same bytes as the CPU one."""
    import json

    out = tmp_path / "gpu_check.json"
    done = subprocess.run([sys.executable, "bench/gpu_check.py", "--tiny", "--device", "cpu", "--out", str(out)],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(out.read_text())
    assert all("error" not in report[k] for k in ("merge", "rollouts", "alpha_switch", "rl")), report
    assert report["merge"]["identical_bytes"] is True and report["rollouts"]["tokens"] > 0
    assert report["rl"]["steps"] == 1 and len(report["rl"]["reward_mean_logged"]) == 1
    assert "skipped" in report["vllm"]  # no vLLM here: said, not faked


@pytest.mark.slow
def test_gpu_check_vllm_part_through_the_standin(tmp_path, monkeypatch):
    """The vLLM part of bench/gpu_check.py, run through the vLLM stand-in with vLLM's msgpack rule
    on (collective_rpc of a Python function, which the script once sent, is refused): switched
    weights equal a merged folder's, bit for bit, and the engines run one after another on one device."""
    import os

    from tests.rollout import vllm_standin

    vllm_standin.install(monkeypatch)
    assert not vllm_standin.insecure_serialization() and "VLLM_ALLOW_INSECURE_SERIALIZATION" not in os.environ
    gpu_check = bench_script("gpu_check")
    low, high, _ = gpu_check.build_pair(tmp_path, gpu_check.TINY)
    report = gpu_check.check_vllm(low, high, tmp_path)
    assert report["identical_to_merged_folder"] == {"-0.5": True, "0.5": True, "1.5": True}
    assert report["engines_in_a_row"] == 4 and report["tokens"] > 0
    assert vllm_standin.DEVICE.free == vllm_standin.DEVICE.total  # every engine gave its share back
    rpcs = [e[1] for e in vllm_standin.EVENTS if e[0] == "rpc"]
    assert rpcs.count("flab_weights_digest") == 6 and all(isinstance(m, str) for m in rpcs)


def test_dashboard_bench_builds_the_asked_shape_in_experiment_order(tmp_path):
    """bench/dashboard_speed.py's SYNTHETIC file: exactly checkpoints × problems × samples rows per
    experiment, ids as documented, each row's outcome the one its verdict gives (the judge's own
    rule, backend/outcomes.py), and one experiment's rows after another on disk."""

    import duckdb

    from backend.outcomes import stored_outcome as outcome_of

    bench = bench_script("dashboard_speed")
    db = tmp_path / "bench.duckdb"
    bench.build(db, rows=3 * 20 * 4 * 250 + 999, experiments=3)  # 4 problems; the remainder is dropped
    con = duckdb.connect(str(db), read_only=True)
    q = con.execute
    per_pair = q("SELECT experiment_id, checkpoint_id, count(*), count(DISTINCT problem_id), min(sample_idx), "
                 "max(sample_idx), count(DISTINCT (problem_id, sample_idx)) FROM evaluations "
                 "GROUP BY ALL ORDER BY ALL")  # fmt: skip
    expected = [(f"sweep-20250601-{e:06d}", f"c{c:02d}", 1000, 4, 0, 249, 1000) for e in range(3) for c in range(20)]
    assert per_pair.fetchall() == expected
    problems = q("SELECT DISTINCT problem_id FROM evaluations ORDER BY 1").fetchall()
    assert problems == [(f"syn/p{p:05d}",) for p in range(4)]
    keyed = q("SELECT count(*) FROM evaluations WHERE experiment_key = md5_number_lower(experiment_id)").fetchone()
    assert keyed == (60_000,)  # the store's derived key, as backend/store.py fills it
    # each experiment's rows are one run of rowids, in experiment order (as a real database fills)
    runs = q("SELECT experiment_id, min(rowid), max(rowid) FROM evaluations GROUP BY 1 ORDER BY 2").fetchall()
    assert runs == [(f"sweep-20250601-{e:06d}", e * 20_000, e * 20_000 + 19_999) for e in range(3)]
    by_verdict = q("SELECT verdict, outcome, min(first_failing_tier), max(first_failing_tier), "
                   "min(highest_tier_passed), max(highest_tier_passed) FROM evaluations "
                   "GROUP BY ALL").fetchall()  # fmt: skip
    assert {v for v, *_ in by_verdict} == {"AC", "TLE", "MLE", "WA", "RE", "CE", "FORMAT"}
    assert all(outcome == outcome_of(verdict) for verdict, outcome, *_ in by_verdict)
    tiers = {v: tuple(t) for v, _, *t in by_verdict}
    assert tiers["AC"] == (None, None, 6, 6) and tiers["CE"] == tiers["FORMAT"] == (None, None, 0, 0)
    assert tiers["TLE"] == (3, 6, 2, 5) and tiers["WA"] == (1, 6, 0, 5)


@pytest.mark.slow
def test_findings_calibration_bench_at_smoke_size():
    """bench/findings_calibration.py's every family and test at 12 problems, 6 worlds each (the docs'
    tables come from its full run): every registered test runs in every family it names, a null row
    gives no more positives than a binomial count at its level plausibly gives, large planted effects
    show, the CIs cover, and the tables have one row per (test, family)."""
    bench = bench_script("findings_calibration")
    results = bench.run(6, workers=1, sizes=(12,), progress=lambda line: None)
    assert {key: len(r) for key, r in results.items()} == {(f, 12): 6 for f in bench.FAMILIES}
    for test in bench.TESTS:
        for family in test.nulls:
            hits, tested = bench.rate(results[family, 12], test.name, test.gated)
            assert tested == 6, (test.name, family, tested)  # F2 (gated) counts every world
            if test.kind == "test":
                assert hits <= 2, (test.name, family, hits)  # P(≥ 3 of 6) ≤ 0.2 % at a 5 % level
            else:
                assert hits >= 4, (test.name, family, hits)  # a 95 % CI: P(≤ 3 of 6) ≤ 0.2 %
    planted = (("recovery: off the curve", "f2-planted"), ("trend slope, optimization share", "frontier+churn"))
    for name, family in planted:
        assert bench.rate(results[family, 12], name)[0] >= 4, name
    nulls, _ = bench.null_table(results, sizes=(12,))
    assert nulls.count("\n") == 1 + sum(len(t.nulls) for t in bench.TESTS if t.kind == "test")
    coverage, _ = bench.coverage_table(results, sizes=(12,))
    assert coverage.count("\n") == 1 + sum(len(t.nulls) for t in bench.TESTS if t.kind == "coverage")


def test_the_calibration_rule_fails_a_row_above_its_level_by_its_own_simulation():
    """The rule's threshold is the binomial's 1 % upper tail, counted here by a loop over the exact
    tail; simulated on itself it catches 3.5 % against 2.5 % in at least 90 % of rows at N = 4,000
    (not at 2,000: why the bench runs 4,000), and fails a test exactly at its level in at most 1 %."""
    from scipy.stats import binom

    bench = bench_script("findings_calibration")
    for nominal, worlds in ((0.025, 2000), (0.025, 4000), (0.05, 4000)):
        c = next(c for c in range(worlds) if binom.sf(c - 1, worlds, nominal) <= 0.01)
        assert bench.fail_at(nominal, worlds) == c
    assert bench.rule_power(0.035, 0.025, 4000) >= 0.90 > bench.rule_power(0.035, 0.025, 2000)
    assert bench.rule_power(0.025, 0.025, 4000) <= 0.012


def test_the_calibration_tables_come_from_a_stopped_runs_log(tmp_path, capsys):
    """`--table-from LOG` runs nothing and prints the tables of the worlds a log holds, each world
    once, the torn last line of a stopped run skipped, the rule applied at the N the log has: 5 of 40
    false positives at 2.5 % fail it (P(≥ 5 | Binomial(40, 0.025)) ≈ 0.08 %), 1 of 40 does not."""
    import json

    bench = bench_script("findings_calibration")
    name = "F1 optimization failures fall"
    lines = [["identical", 12, i, {name: i < 5}] for i in range(40)]
    lines += [["common-peak", 12, i, {name: i < 1}] for i in range(40)]
    lines += [lines[0], ["identical", 40, 0, {name: True}]]  # a world written twice; a size not asked for
    log = tmp_path / "run.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines) + '["identical", 12, 40, {"F1 opt')
    assert bench.main(["--table-from", str(log), "--sizes", "12"]) == 1
    out = capsys.readouterr().out
    assert "40–40 worlds per family and size" in out
    rows = {row.split(" | ")[3]: row for row in out.splitlines() if row.startswith(f"| {name} |") and "% (" in row}
    assert rows["identical"].endswith("| 12.50% (5/40) | ABOVE at 12 |")
    assert rows["common-peak"].endswith("| 2.50% (1/40) | within |")
    assert "FAILS THE RULE: F1 optimization failures fall in identical at 12 problems" in out
    with pytest.raises(SystemExit) as refused:
        bench.main(["--table-from", str(tmp_path / "none.jsonl")])
    assert refused.value.code == 2 and "no log at" in capsys.readouterr().err


def test_a_test_that_names_a_family_the_bench_lacks_is_refused():
    bench = bench_script("findings_calibration")
    typo = bench.Test("x", "e", "d", 0.05, ("identicall",), (), lambda w: True)
    with pytest.raises(ValueError, match="identicall"):
        bench.check_registry([*bench.TESTS, typo])
    bench.check_registry()  # the registry as committed names only families it has


def test_the_docs_calibration_tables_have_one_row_per_test_and_family_the_bench_runs():
    """docs/findings.md's tables are the bench's (`--table-from` a run's log): one false-positive
    row per (test, null family) and one coverage row per (interval, family), in the bench's order,
    each measured at 12, 40 and 100 problems on the worlds the page says were run (a gain-table row
    counts only the worlds whose cells support its k)."""
    bench = bench_script("findings_calibration")
    text = (ROOT / "docs" / "findings.md").read_text()
    fewest, most = map(int, re.search(r"(\d+)–(\d+) worlds per family\s+and\s+size", text).groups())
    counted = re.compile(r"% \((\d+)/(\d+)\)$")
    tiers = tuple(f"| {t[0]} |" for t in bench_script("tier_calibration").TIER_TESTS)  # their own table, below
    rows = [
        line.split(" | ")
        for line in text.splitlines()
        if line.startswith("| ") and "% (" in line and not line.startswith(tiers)
    ]
    want = [(t.name, f) for t in bench.TESTS for f in t.nulls]
    assert [(row[0][2:], row[3] if len(row) == 8 else row[1]) for row in rows] == want
    for row in rows:
        worlds = [int(m.group(2)) for cell in row if (m := counted.search(cell))]
        low = 0 if row[0].startswith("| gain table") else fewest
        assert len(worlds) == 3 and all(low <= w <= most for w in worlds), row


def test_tier_calibration_bench_at_smoke_size_and_its_rows_in_the_docs():
    """bench/tier_calibration.py's worlds and tests, 20 worlds per kind at 12 problems: the tool's
    tiers split no more no-difference sweeps than a 5 % level plausibly gives (P(≥ 5 of 20) ≤ 1.6 %),
    the truly best stays in tier 1 under the planted trend; docs/findings.md holds its rows at N = 2000."""
    bench = bench_script("tier_calibration")
    results = bench.run(20, sizes=(12,))
    assert sum(r[bench.TIERS] for r in results["identical", 12]) <= 4
    assert all(r[bench.BEST_KEPT] for r in results["alpha-trend", 12])
    lines, _ = bench.rows(results, sizes=(12,))
    assert [line.split(" | ")[0][2:] for line in lines] == [t[0] for t in bench.TIER_TESTS]
    text = (ROOT / "docs" / "findings.md").read_text()
    docs = [line.split(" | ") for line in text.splitlines() if line.startswith("| ") and "/2000)" in line]
    assert [row[0][2:] for row in docs] == [t[0] for t in bench.TIER_TESTS]
    assert all(row[5].endswith("/2000)") and row[6].endswith("/2000)") for row in docs)
