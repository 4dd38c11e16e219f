"""Gains over the best single at each k, cross-fitted, against simulations whose truth is known
(independent references: exact combinatorics from the counts, the simulation's own pass rates)."""

from math import comb

import numpy as np
import pytest

from backend.analysis.ensembles import gain_table, standard_pools
from backend.analysis.frame import Outcomes
from tests.analysis.test_findings import outcomes

N = 16  # samples per cell: the gain curve reaches k = N / 2 − 1 (scored on half the samples; gain_kmax)
KMAX = N // 2 - 1


def test_best_single_is_the_best_at_each_k_and_the_pool_gain_matches_the_exact_value():
    """A (α = 0) is sure on 70 % of problems and hopeless on the rest, so it is best at pass@1;
    B (α = 1) solves every problem 40 % of the time, so it is best at pass@7, the largest k."""
    rng = np.random.default_rng(11)
    p_a = np.where(np.arange(200) < 140, 0.95, 0.02)
    p_b = np.full(200, 0.4)
    o = outcomes(rng.binomial(N, np.stack([p_a, p_b], axis=1)), N, [0.0, 1.0])
    table = gain_table(o, {"A+B": ["m0", "m1"]}, seed=3)
    best = table.filter(table["pool"] == "best single").sort("k")
    assert best["k"].to_list() == list(range(1, KMAX + 1))
    for row in best.to_dicts():
        k = row["k"]
        single = [np.mean([1 - comb(N - c, k) / comb(N, k) for c in o.correct[:, m]]) for m in (0, 1)]
        assert row["pass_at_k_in_sample"] == pytest.approx(max(single))
        assert row["baseline"] == ["m0", "m1"][int(np.argmax(single))]
    assert best["baseline"][0] == "m0" and best["baseline"][-1] == "m1"
    # exact: at k = 7 the pool spends 3 samples on each member and the 7th on one chosen at random
    k = KMAX
    miss_a, miss_b = 1 - p_a, 1 - p_b
    pool = 1 - (miss_a**4 * miss_b**3 + miss_a**3 * miss_b**4) / 2
    exact = pool.mean() - max((1 - (1 - p_a) ** k).mean(), (1 - (1 - p_b) ** k).mean())
    row = table.filter((table["pool"] == "A+B") & (table["k"] == k)).to_dicts()[0]
    assert row["baseline"] == "m1" and row["gain_lo"] <= exact <= row["gain_hi"], (row, exact)
    assert set(table.columns) == {"pool", "members", "k", "pass_at_k", "lo", "hi", "pass_at_k_in_sample", "gain",
                                  "gain_lo", "gain_hi", "baseline", "n_problems"}  # fmt: skip
    pool = table.filter(table["pool"] == "A+B")  # nothing chosen: held out and in sample are one number
    assert pool["pass_at_k"].to_list() == pool["pass_at_k_in_sample"].to_list()


def test_the_best_single_reports_its_held_out_pass_at_k_beside_the_in_sample_maximum():
    """9 identical checkpoints, 400 problems at known pass rates: every checkpoint's true pass@k is
    the same, mean(1 − (1 − p)^k). The in-sample maximum over 9 noisy estimates sits above it; the
    held-out pass@k (chosen on one half, scored on the other) is unbiased, and its CI holds it."""
    rng = np.random.default_rng(21)
    p = rng.uniform(0.05, 0.6, 400)
    alphas = [-1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0, 1.5]
    o = outcomes(rng.binomial(N, np.repeat(p[:, None], len(alphas), axis=1)), N, alphas)
    table = gain_table(o, {"all": o.checkpoints}, greedy=True, replicates=400, seed=2)
    for pool in ("best single", "greedy"):
        rows = table.filter(table["pool"] == pool).sort("k").to_dicts()
        for row in rows:
            truth = float(np.mean(1 - (1 - p) ** row["k"]))
            assert row["lo"] <= truth <= row["hi"], (pool, row, truth)
            assert abs(row["pass_at_k"] - truth) < row["pass_at_k_in_sample"] - truth, (pool, row, truth)


@pytest.mark.slow  # 200 cross-fitted gain tables: about 30 s on an idle core, 80 s under load
def test_gain_ci_of_a_pool_of_identical_checkpoints_covers_zero():
    """9 identical checkpoints, 34 problems at pass rates in (0.2, 0.8), 200 simulated runs: the
    pool of all 9 gains exactly 0 at every k, and its 95 % CI may exclude 0 in at most 7 % of runs
    at any k (with the baseline chosen on the same samples it did in 32 % at k = 1)."""
    alphas = [-1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0, 1.5]
    runs, excluded = 200, np.zeros(KMAX)
    for run in range(runs):
        rng = np.random.default_rng(7000 + run)
        p = rng.uniform(0.2, 0.8, 34)
        o = outcomes(rng.binomial(N, np.repeat(p[:, None], len(alphas), axis=1)), N, alphas)
        rows = gain_table(o, {"all": o.checkpoints}, splits=4, replicates=300, seed=run)
        rows = rows.filter(rows["pool"] == "all").sort("k")
        excluded += (rows["gain_lo"].to_numpy() > 0) | (rows["gain_hi"].to_numpy() < 0)
    assert (excluded / runs <= 0.07).all(), excluded / runs


def test_an_independent_checkpoint_is_neither_the_baseline_nor_pooled_unless_named():
    """An SFT checkpoint evaluated beside the sweep solves every problem; the sweep's own two never
    do better than 0.3 of the time. It is not a point of the sweep, so the best single at each k is
    the better merged checkpoint (exact combinatorics from the counts) and no standard pool holds
    it; named in a pool, it counts there and its gain is measured against that merged baseline."""
    rng = np.random.default_rng(4)
    correct = rng.binomial(N, np.tile([0.1, 0.3, 0.95], (40, 1)))
    base = outcomes(correct, N, [0.0, 1.0, 0.5])
    kinds = ["endpoint", "endpoint", "independent"]
    o = Outcomes(base.problems, base.titles, base.difficulty, ["m0", "m1", "sft"], ["m0", "m1", "sft"],
                 [0.0, 1.0, None], kinds, base.n, base.counts)  # fmt: skip
    assert all("sft" not in members for members in standard_pools(o).values())
    table = gain_table(o, {"m0+sft": ["m0", "sft"]}, replicates=200, seed=1)
    best = table.filter(table["pool"] == "best single").sort("k")
    for row in best.to_dicts():
        k = row["k"]
        single = [np.mean([1 - comb(N - c, k) / comb(N, k) for c in correct[:, m]]) for m in (0, 1)]
        assert row["baseline"] == ["m0", "m1"][int(np.argmax(single))]
        assert row["pass_at_k_in_sample"] == pytest.approx(max(single))
    named = table.filter((table["pool"] == "m0+sft") & (table["k"] == 1)).to_dicts()[0]
    assert named["baseline"] == "m1" and named["gain_lo"] > 0  # pass@1 ≈ (0.1 + 0.95) / 2 against ≈ 0.3
