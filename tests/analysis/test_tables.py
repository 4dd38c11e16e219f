import json

import numpy as np
import pytest

from backend.analysis.churn import churn_stats, order_problems, solve_matrix, unique_solves, unique_solves_expected
from backend.analysis.ensembles import gain_table, greedy_pool, passk_per_checkpoint, pool_curve, standard_pools
from backend.analysis.frame import to_outcomes
from backend.analysis.frontier import frontier_table
from backend.errors import UserError
from backend.outcomes import OUTCOME_CLASSES
from backend.store_queries import SampleFilter
from tests.analysis.conftest import fill_experiment
from tests.conftest import run_cli


@pytest.fixture
def outcomes(store, synthetic_outcomes):
    fill_experiment(store, *synthetic_outcomes)
    return to_outcomes(store.outcome_counts("exp-a"))


def test_store_counts_and_alpha_order(outcomes):
    assert outcomes.alphas == [-0.5, 0.0, 0.5, 1.0, 1.5]
    assert outcomes.kinds == ["extrapolated", "endpoint", "interpolated", "endpoint", "extrapolated"]
    assert (outcomes.n == 12).all() and sum(v.sum() for v in outcomes.counts.values()) == 5 * 30 * 12


@pytest.mark.parametrize("averaging", ["per_problem", "per_sample"])
def test_frontier_fractions_sum_to_one_and_cis_contain_points(outcomes, averaging):
    table = frontier_table(outcomes, averaging)
    total = sum(table[c].to_numpy() for c in OUTCOME_CLASSES)
    np.testing.assert_allclose(total, 1.0)
    for c in (*OUTCOME_CLASSES, "solve_rate"):
        assert (table[f"{c}_lo"] <= table[c] + 1e-12).all() and (table[c] <= table[f"{c}_hi"] + 1e-12).all()
    assert set(table["averaging"]) == {averaging}
    # the synthetic data shifts failures from optimization to correctness as α grows
    assert table["optimization_failure"][0] > table["optimization_failure"][-1]


def test_per_problem_and_per_sample_differ_when_sample_counts_differ(store):
    fill_experiment(store, {("m", "p1"): ["correct"] * 10, ("m", "p2"): ["correctness_failure"] * 2}, {"m": 0.5})
    o = to_outcomes(store.outcome_counts("exp-a"))
    assert frontier_table(o, "per_problem")["correct"][0] == pytest.approx(0.5)
    assert frontier_table(o, "per_sample")["correct"][0] == pytest.approx(10 / 12)


def test_the_ci_over_problems_shrinks_with_more_problems(store, synthetic_outcomes):
    outcomes, alphas = synthetic_outcomes
    small = {k: v for k, v in outcomes.items() if int(k[1][1:]) < 8}
    fill_experiment(store, small, alphas, exp="small")
    fill_experiment(store, outcomes, alphas, exp="big")
    width = {}
    for exp in ("small", "big"):
        t = frontier_table(to_outcomes(store.outcome_counts(exp)))
        width[exp] = (t["correct_hi"] - t["correct_lo"]).mean()
    assert width["big"] < width["small"]


def test_filters_reach_the_query(store, synthetic_outcomes):
    outcomes, alphas = synthetic_outcomes
    fill_experiment(store, outcomes, alphas, difficulty={"p00": "hard", "p01": "hard"})
    assert set(store.outcome_counts("exp-a", SampleFilter(difficulty="hard"))["problem_id"]) == {"p00", "p01"}
    with pytest.raises(UserError, match="no judged samples"):
        to_outcomes(store.outcome_counts("nope"))


def test_churn_counts_on_a_handmade_matrix(store):
    # solved (≥1 correct) pattern over α = -0.5, 0, 0.5, 1, 1.5 for four problems:
    pattern = {"p1": "11111", "p2": "10001", "p3": "01110", "p4": "00100"}
    alphas = {"a-0.5": -0.5, "a0": 0.0, "a0.5": 0.5, "a1": 1.0, "a1.5": 1.5}
    outs = {(c, p): ["correct" if bits[i] == "1" else "correctness_failure"] * 2
            for p, bits in pattern.items() for i, c in enumerate(alphas)}  # fmt: skip
    fill_experiment(store, outs, alphas)
    o = to_outcomes(store.outcome_counts("exp-a"))
    stats = churn_stats(o)
    # neighbour flips: (-0.5→0): p2 lost, p3 gained; (0→0.5): p4 gained; (0.5→1): p4 lost; (1→1.5): p2 gained, p3 lost
    assert [(f["gained"], f["lost"]) for f in stats["flips"]] == [(1, 1), (1, 0), (0, 1), (1, 1)]
    assert stats["total_flips"] == 6
    assert stats["solved_only_inside"] == ["p3", "p4"]
    assert stats["solved_only_outside"] == ["p2"]
    assert stats["union_solved"] == 4 and stats["best_single"]["solved"] == 3
    jac = np.array(stats["jaccard"]["matrix"])
    assert jac[0, 4] == 1.0 and jac[0, 2] == pytest.approx(1 / 4)  # {p1,p2} vs {p1,p3,p4}
    assert order_problems(o) == ["p1", "p2", "p3", "p4"]  # by α of the peak: -0.5, -0.5 (ties by id), 0, 0.5
    assert len(solve_matrix(o)) == 20
    assert unique_solves(o) == ["p2"]


def test_unique_solves_stand_beside_what_noise_alone_gives():
    """One problem, 2 of 4 samples correct, 2 at α = −0.5 and 2 at α = 0. Dealt at random, α = −0.5
    gets X ~ Hypergeometric(4, 2, 2) correct: a unique solve (α = −0.5 at least half, α = 0 not)
    needs X = 2, probability 1/6. Three such problems expect 0.5."""
    from backend.analysis.frame import Outcomes

    correct = np.array([[2, 0], [1, 1], [0, 2]])
    n = np.full((3, 2), 2)
    counts = {"correct": correct, "optimization_failure": n - correct, "correctness_failure": 0 * n,
              "format_failure": 0 * n}  # fmt: skip
    o = Outcomes(["a", "b", "c"], ["", "", ""], [None] * 3, ["x", "y"], ["x", "y"], [-0.5, 0.0],
                 ["extrapolated", "endpoint"], n, counts)  # fmt: skip
    assert unique_solves(o) == ["a"]  # what the sample shows; noise alone gives half of one
    assert unique_solves_expected(o, draws=40_000) == pytest.approx(0.5, abs=0.02)


def test_pools_gains_and_greedy(outcomes, synthetic_outcomes):
    pools = standard_pools(outcomes)
    assert set(pools) == {"all interpolated", "interpolated + extrapolated"}
    assert len(pools["interpolated + extrapolated"]) == 5
    greedy = greedy_pool(outcomes, 12)
    best12 = max(pool_curve(outcomes, [c], [12]).mean() for c in outcomes.checkpoints)
    assert pool_curve(outcomes, greedy, [12]).mean() >= best12
    table = gain_table(outcomes, pools, greedy=True)
    assert set(table["k"]) == set(range(1, 6))  # 12 samples: halves of 6, the gain curve up to k = 5
    assert set(table["pool"]) == {"best single", "all interpolated", "interpolated + extrapolated", "greedy"}
    # independent reference from the raw sample lists: pass@1 of a pool is its members' mean share
    # of correct samples (k = 1: one sample from a uniformly random member)
    raw, _ = synthetic_outcomes
    rate = {
        c: np.mean([np.mean([o == "correct" for o in raw[(c, p)]]) for p in outcomes.problems])
        for c in outcomes.checkpoints
    }
    at1 = table.filter(table["k"] == 1)
    row = {r["pool"]: r for r in at1.to_dicts()}
    assert row["best single"]["pass_at_k_in_sample"] == pytest.approx(max(rate.values()))
    assert row["best single"]["baseline"] == max(rate, key=rate.get)
    members = pools["all interpolated"]
    assert row["all interpolated"]["pass_at_k"] == pytest.approx(np.mean([rate[c] for c in members]))
    assert (table["gain_lo"] <= table["gain"] + 1e-12).all() and (table["gain"] <= table["gain_hi"] + 1e-12).all()
    curves = passk_per_checkpoint(outcomes)
    assert (
        curves["k"].max() == 12
        and (curves["pass_at_k"].diff().drop_nulls().filter(curves["k"][1:] > 1) >= -1e-12).all()
    )
    bare = passk_per_checkpoint(outcomes, with_ci=False)  # the same curves, no CIs
    assert bare["pass_at_k"].to_list() == curves["pass_at_k"].to_list()
    assert bare["lo"].null_count() == len(bare) and curves["lo"].null_count() == 0


@pytest.mark.slow
def test_cli_analyze(store, synthetic_outcomes, db_path):
    fill_experiment(store, *synthetic_outcomes)
    out = run_cli("analyze", "frontier", "--experiment", "exp-a", "--json", "--db", str(db_path))
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert [r["alpha"] for r in rows] == [-0.5, 0.0, 0.5, 1.0, 1.5]
    assert "# filters: difficulty = all, platform = all, setting = all" in out.stderr  # how, beside the JSON
    shown = run_cli("analyze", "frontier", "--experiment", "exp-a", "--opt-min-tier", "3", "--db", str(db_path)).stdout
    assert shown.splitlines()[2].startswith("# tier rule: a TLE/MLE whose first failing test is below tier 3")
    ens = json.loads(run_cli("analyze", "ensembles", "--experiment", "exp-a", "--json", "--db", str(db_path)).stdout)
    assert {"gains", "pools", "unique_solves", "unique_solves_expected_if_alike"} <= set(ens)
    csv = run_cli("analyze", "churn", "--experiment", "exp-a", "--csv", "--db", str(db_path)).stdout
    assert csv.splitlines()[0].startswith("problem_id,title,checkpoint_id")
    bad = run_cli("analyze", "frontier", "--experiment", "missing", "--db", str(db_path))
    assert bad.returncode == 2 and "no experiment 'missing'" in bad.stderr and bad.stderr.count("\n") == 1
