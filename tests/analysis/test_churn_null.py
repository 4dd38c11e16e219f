"""Churn against noise (analysis/churn.py): the expected flips are the no-churn model's, checked
against exact binomial sums over that model's own cell probabilities; the union's excess over
the best single (F3's estimator, analysis/churn_excess.py) on a sweep with no churn and on one with
planted churn; and the CLI's JSON fields, through the store, equal to F3's."""

import json

import numpy as np
import pytest
from scipy.stats import binom

from backend.analysis.churn import churn_stats
from backend.analysis.frame import Outcomes, point_kind, to_outcomes
from backend.analysis.resampling import fit_additive_logit
from tests.analysis.conftest import fill_experiment
from tests.conftest import run_cli

ALPHAS = [-0.5, 0.0, 0.5, 1.0, 1.5]


def sweep(correct: np.ndarray, n: int = 16) -> Outcomes:
    P, C = correct.shape
    names = [f"a{a:g}" for a in ALPHAS[:C]]
    counts = {"correct": correct, "optimization_failure": n - correct, "correctness_failure": np.zeros_like(correct),
              "format_failure": np.zeros_like(correct)}  # fmt: skip
    return Outcomes([f"p{i}" for i in range(P)], [""] * P, [None] * P, names, names, ALPHAS[:C],
                    [point_kind("merged", a) for a in ALPHAS[:C]], np.full((P, C), n), counts)  # fmt: skip


def test_expected_flips_are_the_no_churn_models_exact_expectation():
    """Under the fitted model a cell is solved with probability q = P(Binomial(16, p) ≥ 8), cells
    independent: a pair's expected gains are Σ_p (1 − q_pa)·q_pb, its losses Σ_p q_pa·(1 − q_pb)."""
    rng = np.random.default_rng(5)
    correct = rng.binomial(16, rng.uniform(0.2, 0.8, (30, 1)), (30, 5))
    o = sweep(correct)
    stats = churn_stats(o, null_replicates=4000)
    q = binom.sf(7, 16, fit_additive_logit(o.n, o.correct))  # P(at least 8 of 16 correct)
    for j, flip in enumerate(stats["flips"]):
        gained, lost = ((1 - q[:, j]) * q[:, j + 1]).sum(), (q[:, j] * (1 - q[:, j + 1])).sum()
        assert flip["expected_gained"] == pytest.approx(gained, abs=0.15)  # MC sd ≈ 2.5/√4000 ≈ 0.04
        assert flip["expected_lost"] == pytest.approx(lost, abs=0.15)
    total = sum(((1 - q[:, j]) * q[:, j + 1] + q[:, j] * (1 - q[:, j + 1])).sum() for j in range(4))
    assert stats["total_flips_expected"] == pytest.approx(total, abs=0.4)
    assert stats["total_flips_expected"] > 5  # noise alone flips problems: what the raw count hid


def test_union_excess_does_not_show_without_churn_and_shows_with_it():
    rng = np.random.default_rng(6)
    shown = 0
    for run in range(40):  # identical checkpoints: the union's excess is noise
        excess = churn_stats(sweep(rng.binomial(16, rng.uniform(0.2, 0.8, (30, 1)), (30, 5))), seed=run)["union_excess"]
        assert excess["lo"] <= excess["estimate"] <= excess["hi"] and excess["level"] == 0.95
        shown += excess["status"] == "shows"
    assert shown <= 3  # a one-sided 2.5 % test: P(4 or more of 40) ≈ 1.7 %
    # planted churn: every problem solved at one α only, a different one for each problem
    disjoint = np.where(np.arange(30)[:, None] % 5 == np.arange(5)[None, :], 15, 2)
    stats = churn_stats(sweep(rng.binomial(16, disjoint / 16)))
    assert stats["union_solved"] - stats["best_single"]["solved"] >= 20
    assert stats["union_excess"]["lo"] > 10 and stats["union_excess"]["status"] == "shows"


def test_cli_churn_json_reports_each_count_beside_its_null(store, db_path):
    pattern = {"p1": "11111", "p2": "10001", "p3": "01110", "p4": "00100"}
    alphas = {f"a{a:g}": a for a in ALPHAS}
    outs = {(c, p): ["correct" if bits[i] == "1" else "correctness_failure"] * 4
            for p, bits in pattern.items() for i, c in enumerate(alphas)}  # fmt: skip
    fill_experiment(store, outs, alphas)
    out = run_cli("analyze", "churn", "--experiment", "exp-a", "--json", "--db", str(db_path))
    assert out.returncode == 0, out.stderr
    stats = json.loads(out.stdout)
    expected = churn_stats(to_outcomes(store.outcome_counts("exp-a")))
    assert [(f["gained"], f["lost"]) for f in stats["flips"]] == [(1, 1), (1, 0), (0, 1), (1, 1)]
    assert stats["total_flips_expected"] == pytest.approx(expected["total_flips_expected"])
    assert [f["expected_gained"] for f in stats["flips"]] == pytest.approx(
        [f["expected_gained"] for f in expected["flips"]]
    )
    findings = json.loads(
        run_cli("analyze", "findings", "--experiment", "exp-a", "--json", "--db", str(db_path)).stdout
    )
    f3 = next(f for f in findings if f["finding"] == "churn")  # one estimator: F3 is the Churn page's excess
    excess = stats["union_excess"]
    assert (excess["estimate"], excess["lo"], excess["hi"], excess["status"]) == (
        f3["statistic"], f3["ci_low"], f3["ci_high"], f3["status"])  # fmt: skip
    # 4 of 4 samples correct or none: the fitted model's cells are near-certain, so its flips are few
    assert stats["total_flips_expected"] < stats["total_flips"]
