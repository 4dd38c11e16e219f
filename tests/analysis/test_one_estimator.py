"""Issue 56: one estimator per claim, undefined is not a verdict, nothing dropped in silence.
Experiments are written into a real DuckDB file through the store and read back by `analyze`'s
own command body; the references are exact combinatorics from the counts written."""

import csv
import io
import json
from math import comb

import numpy as np
import pytest

from backend.analysis.findings import FindingsSpec, check_findings
from backend.cli.analyze import analyze_command
from tests.analysis.conftest import fill_experiment
from tests.analysis.test_findings import outcomes

CROSSOVER = {"a0": 0.0, "a0.5": 0.5, "a1": 1.0}


def crossover() -> dict:
    """α = 0 and α = 1 solve 6 of 16 samples on every one of 40 problems; α = 0.5 solves all 16 on
    18 problems and none on the other 22: best at pass@1, worst at pass@4."""
    cells = {}
    for p in range(40):
        for c in ("a0", "a1"):
            cells[(c, f"p{p:02d}")] = ["correct"] * 6 + ["correctness_failure"] * 10
        cells[("a0.5", f"p{p:02d}")] = ["correct"] * 16 if p < 18 else ["correctness_failure"] * 16
    return cells


def run(what: str, db_path, capsys, **options) -> str:
    analyze_command(what, experiment="exp-a", db=db_path, **options)
    return capsys.readouterr().out


def test_f4_on_the_crossover_is_the_gain_tables_row_and_does_not_show(store, db_path, capsys):
    """The old F4 chose α = 0.5 by problems solved (pass@1-type) and compared at k = 4: "shows
    +0.376". At k = 4 the best single is α = 0 or α = 1 (exact in-sample pass@4 below), the pool
    of all three is worse, and F4 is that row of `analyze ensembles`, estimate and CI alike."""
    fill_experiment(store, crossover(), CROSSOVER)
    f4 = json.loads(run("findings", db_path, capsys, as_json=True))[3]
    gains = json.loads(run("ensembles", db_path, capsys, as_json=True))["gains"]
    row = next(r for r in gains if r["pool"] == "all interpolated" and r["k"] == 4)
    best = next(r for r in gains if r["pool"] == "best single" and r["k"] == 4)
    assert "pass@4" in f4["criterion"] and "all interpolated" in f4["criterion"]
    assert f4["status"] == "does_not_show" and f4["ci_low"] < 0 < f4["ci_high"] <= 0.02  # rules out the +0.02 it needs
    assert (f4["statistic"], f4["ci_low"], f4["ci_high"]) == pytest.approx(
        (row["gain"], row["gain_lo"], row["gain_hi"]), abs=1e-12
    )
    # exact in-sample pass@4 from the counts: α = 0 or 1, 1 − C(10, 4)/C(16, 4); the pool spends one sample
    # on each member and the fourth on one drawn at random: on the 22 problems α = 0.5 misses
    single = 1 - comb(10, 4) / comb(16, 4)
    one, two = 10 / 16, comb(10, 2) / comb(16, 2)
    pool = (18 + 22 * (1 - (2 * two * one + one * one) / 3)) / 40
    assert best["pass_at_k_in_sample"] == pytest.approx(single) and best["baseline"] in ("a0", "a1")
    assert row["pass_at_k_in_sample"] == pytest.approx(pool) and row["pass_at_k"] == pytest.approx(pool)
    assert row["gain"] < 0 and f4["excluded_problems"] == []


def test_an_undefined_share_is_not_tested_with_the_reason_in_words():
    """At α = 1.5 every sample that fails is a format failure: the optimization share of failures
    there is 0/0. That part is not tested (no verdict, no statistic), its reason says why, and F2
    takes it as its reason; the α < 0 side, defined, shows."""
    opt = np.tile([12, 10, 2, 0], (20, 1))
    corr = np.tile([0, 2, 10, 0], (20, 1))
    o = outcomes(np.full((20, 4), 4), 16, [-0.5, 0.0, 1.0, 1.5], opt=opt, corr=corr)
    f2 = check_findings(o, FindingsSpec(splits=2))[1]
    share = next(p for p in f2.parts if p.name.startswith("opt share more extreme at α=1.5"))
    assert share.status == "not_tested" and share.statistic is None and share.ci_low is None
    assert share.reason.startswith("every failure at α = 1.5 is a format failure")
    below = next(p for p in f2.parts if p.name.startswith("opt share more extreme at α=-0.5"))
    assert below.status == "shows" and below.statistic == pytest.approx(1 - 10 / 12)
    assert f2.status == "not_tested" and f2.reason == share.reason


def test_findings_report_the_problems_they_leave_out(store, db_path, capsys):
    """p39 has one sample at α = 0.5: F3 needs two of every merged checkpoint to split it, F4 ten
    (pass@4 on each half of five), so both leave it out and say why; F1 compares α = 0 and α = 1,
    which have it, and leaves out nothing."""
    cells = crossover()
    cells[("a0.5", "p39")] = ["correctness_failure"]
    fill_experiment(store, cells, CROSSOVER)
    rows = {r["finding"]: r for r in json.loads(run("findings", db_path, capsys, as_json=True))}
    assert rows["frontier"]["excluded_problems"] == []
    assert rows["churn"]["excluded_problems"] == [
        {"problem_id": "p39", "reason": "fewer than 2 judged samples of a0.5"}
    ]
    f4_reason = "fewer than 10 judged samples of a0.5: pass@4 cross-fitted needs 10 per cell (5 in each half)"
    assert rows["ensemble"]["excluded_problems"] == [{"problem_id": "p39", "reason": f4_reason}]
    assert all(r["opt_min_tier"] is None and "optimization failure" in r["tiny_inputs"] for r in rows.values())
    excluded = json.loads(run("ensembles", db_path, capsys, as_json=True))["excluded_problems"]
    assert excluded == rows["churn"]["excluded_problems"]  # the gain table's curve needs 2 per cell
    text = run("findings", db_path, capsys)  # the terminal's table says the same below it
    assert f"F4 ensemble: 1 problem left out ({f4_reason})" in text
    assert "F1 frontier:" not in text and "Time-outs on tiny inputs: every time or memory failure" in text
    tier = json.loads(run("findings", db_path, capsys, as_json=True, opt_min_tier=3))
    assert {r["opt_min_tier"] for r in tier} == {3} and "below tier 3 (shorter than 100 characters)" in tier[0][
        "tiny_inputs"
    ]


def test_analyze_frontier_counts_sandbox_errors_per_checkpoint(store, db_path, capsys):
    """3 sandbox errors at α = 0 and 1 at α = 1, written beside judged samples: each checkpoint's row
    says how many, in JSON and CSV, and n_samples still counts only the judged ones."""
    cells = crossover()
    cells[("a0", "p00")] += ["sandbox_error"] * 3
    cells[("a1", "p05")] += ["sandbox_error"]
    fill_experiment(store, cells, CROSSOVER)
    rows = {r["checkpoint_id"]: r for r in json.loads(run("frontier", db_path, capsys, as_json=True))}
    assert {c: (r["sandbox_errors"], r["n_samples"]) for c, r in rows.items()} == {
        "a0": (3, 640), "a0.5": (0, 640), "a1": (1, 640)}  # fmt: skip
    table = list(csv.DictReader(io.StringIO(run("frontier", db_path, capsys, as_csv=True))))
    assert {r["checkpoint_id"]: r["sandbox_errors"] for r in table} == {"a0": "3", "a0.5": "0", "a1": "1"}


def test_passk_defaults_use_the_cells_that_exist_and_name_the_empty_ones(store, db_path, capsys):
    """α = 0.5 was never judged on p07: its curve averages the other 39 problems, k still reaches
    16 (the fewest samples of a cell that has any), and stderr names the empty cell. Reference:
    exact pass@k from the counts."""
    cells = {k: v for k, v in crossover().items() if k != ("a0.5", "p07")}
    fill_experiment(store, cells, CROSSOVER)
    out = run("passk", db_path, capsys, as_json=True)
    rows = json.loads(out)
    assert max(r["k"] for r in rows) == 16
    mid = {r["k"]: r for r in rows if r["checkpoint_id"] == "a0.5"}
    assert mid[1]["n_problems"] == 39 and mid[1]["pass_at_k"] == pytest.approx(17 / 39)  # p00–p17 but p07
    end = {r["k"]: r for r in rows if r["checkpoint_id"] == "a0"}
    assert end[4]["n_problems"] == 40 and end[4]["pass_at_k"] == pytest.approx(1 - comb(10, 4) / comb(16, 4))
    analyze_command("passk", experiment="exp-a", db=db_path, as_json=True)
    assert "a0.5 on p07" in capsys.readouterr().err


def planted_churn_cells(rng) -> tuple[dict, dict]:
    """The review's world: 40 problems × 10 α × n = 16, each problem's solve rate swinging along α
    around its own best α (logit 0 ± 1.5), correctness failures otherwise."""
    alphas = [-1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0, 1.25, 1.5, 2.0]
    cells = {}
    for p in range(40):
        phase = rng.uniform(0, 2 * np.pi)
        for a in alphas:
            rate = 1 / (1 + np.exp(-1.5 * np.sin(np.pi / 2 * a + phase)))
            right = int(rng.binomial(16, rate))
            cells[(f"a{a:g}", f"p{p:02d}")] = ["correct"] * right + ["correctness_failure"] * (16 - right)
    return cells, {f"a{a:g}": a for a in alphas}


@pytest.mark.parametrize("errors", [11, 13])
def test_one_cells_sandbox_errors_leave_f4s_k_unchanged_and_that_problem_listed(store, db_path, capsys, errors):
    """The review turned 11 of the 6,400 samples of one cell into sandbox errors and F4 moved from
    pass@4 to pass@1 (13: to not tested, listing nothing). k is fixed by design now: the problem
    whose cell cannot support it is left out with its reason, and F4 stays at pass@4."""
    cells, alphas = planted_churn_cells(np.random.default_rng(8))
    cells[("a0.5", "p07")] = cells[("a0.5", "p07")][: 16 - errors] + ["sandbox_error"] * errors
    fill_experiment(store, cells, alphas)
    f4 = json.loads(run("findings", db_path, capsys, as_json=True))[3]
    assert f4["status"] != "not_tested" and "pass@4" in f4["criterion"] and "pass@1" not in f4["criterion"]
    assert f4["excluded_problems"] == [{"problem_id": "p07", "reason": (
        "fewer than 10 judged samples of a0.5: pass@4 cross-fitted needs 10 per cell (5 in each half)")}]  # fmt: skip
    assert f4["power"]["k"] == 4 and f4["power"]["problems"] == 39 and f4["power"]["n"] == 16
    named = json.loads(run("findings", db_path, capsys, as_json=True, ensemble_k=1))[3]  # a k the user names
    assert "pass@1" in named["criterion"]
    left = [] if errors == 11 else [{"problem_id": "p07", "reason": (  # 3 judged samples: no two halves of 2
        "fewer than 4 judged samples of a0.5: pass@1 cross-fitted needs 4 per cell (2 in each half)")}]  # fmt: skip
    assert named["excluded_problems"] == left
