"""Significance tiers (backend/analysis/tiers.py) and the checkpoint table (backend/analysis/checkpoints.py),
against scipy's paired t-test, Holm written out by hand, and pass@k by exact combinatorics."""

from math import comb

import numpy as np
import pytest
from scipy.stats import ttest_rel

from backend.analysis.checkpoints import checkpoint_table, latex_escape, to_latex
from backend.analysis.frame import Outcomes
from backend.analysis.tiers import beats_p, holm_adjusted, tiers


def test_each_pairs_p_is_scipys_one_sided_paired_t_test():
    rng = np.random.default_rng(3)
    values = rng.uniform(0, 1, (12, 4))
    values[2, 1] = np.nan  # a problem checkpoint 1 has no sample of: left out of its pairs
    p = beats_p(values)
    for j in range(4):
        for c in range(4):
            if j == c:
                assert p[j, c] == 1.0
                continue
            both = ~np.isnan(values[:, j]) & ~np.isnan(values[:, c])
            expected = ttest_rel(values[both, j], values[both, c], alternative="greater").pvalue
            assert p[j, c] == pytest.approx(expected, rel=1e-9)


def test_holm_written_out():
    # sorted: 0.01·4 = 0.04, 0.02·3 = 0.06, 0.03·2 = 0.06, 0.5·1 = 0.5 (each at least the one before)
    assert holm_adjusted(np.array([0.03, 0.5, 0.01, 0.02])).tolist() == pytest.approx([0.06, 0.5, 0.04, 0.06])


def test_three_groups_make_three_tiers_and_alike_checkpoints_one():
    rng = np.random.default_rng(0)
    base = rng.uniform(0.2, 0.6, (40, 1))
    offsets = np.array([0.3, 0.3, 0.0, 0.0, -0.3])  # two best alike, two middle alike, one worst
    values = base + offsets + rng.normal(0, 0.02, (40, 5))
    values[:, 3] = values[:, 2]  # the middle two alike to the last digit: nothing can split them
    t = tiers(values)
    assert t.tier.tolist() == [1, 1, 2, 2, 3]
    # tier 1: how near it came to a split (not near); below it: the p that split it off the tier above
    assert (t.p[:2] > 0.05).all() and (t.p[2:] <= 0.05).all()
    assert t.against[2] in (0, 1) and t.against[4] in (2, 3)  # beaten by one of the tier above
    alike = np.repeat(base, 5, axis=1) + rng.normal(0, 0.02, (40, 5))
    assert tiers(alike).tier.tolist() == [1] * 5


def outcomes(correct: np.ndarray, n: int, difficulty: list[str]) -> Outcomes:
    problems, checkpoints = correct.shape
    labels = [f"c{i}" for i in range(checkpoints)]
    wrong = n - correct
    return Outcomes(
        [f"p{i}" for i in range(problems)], [f"p{i}" for i in range(problems)], difficulty, labels, labels,
        [float(i) for i in range(checkpoints)], ["merged"] * checkpoints, np.full(correct.shape, n),
        {"correct": correct, "optimization_failure": wrong, "correctness_failure": 0 * correct,
         "format_failure": 0 * correct},
    )  # fmt: skip


def test_the_checkpoint_table_by_hand():
    correct = np.array([[4, 0], [2, 1], [0, 0]])  # 3 problems × 2 checkpoints, 4 samples each
    o = outcomes(correct, 4, ["easy", "hard", "hard"])
    table = checkpoint_table(o, k=2)
    rows = {r["label"]: r for r in table.iter_rows(named=True)}
    assert rows["c0"]["pass_at_1"] == pytest.approx((1 + 0.5 + 0) / 3)
    # pass@2 = 1 − C(n−c, 2)/C(n, 2) per problem, averaged
    by_hand = np.mean([1 - comb(4 - c, 2) / comb(4, 2) for c in (4, 2, 0)])
    assert rows["c0"]["pass_at_k"] == pytest.approx(by_hand) and rows["c0"]["k"] == 2
    assert rows["c0"]["pass_at_1_easy"] == 1.0 and rows["c0"]["pass_at_1_hard"] == pytest.approx(0.25)
    assert rows["c1"]["optimization_failure"] == pytest.approx((1 + 0.75 + 1) / 3)
    assert rows["c0"]["pass_at_1_lo"] <= rows["c0"]["pass_at_1"] <= rows["c0"]["pass_at_1_hi"]
    assert table["label"].to_list() == ["c0", "c1"] and set(table["tier"]) == {1}  # 3 problems separate nothing
    assert (rows["c0"]["problems"], rows["c0"]["samples"]) == (3, 12)


def test_latex_is_a_booktabs_table_with_its_provenance_and_escaped_labels():
    o = outcomes(np.array([[4, 0], [2, 1], [0, 0]]), 4, ["easy", "hard", "hard"])
    text = to_latex(checkpoint_table(o, k=2), ["experiment: e_1 (50% of it)"])
    lines = text.splitlines()
    assert lines[0] == r"% experiment: e_1 (50% of it)"
    assert r"\toprule" in lines and r"\midrule" in lines and r"\bottomrule" in lines
    assert lines[lines.index(r"\midrule") + 1].startswith("c0 & 0 & 1 & 3 & 0.500 [")
    assert latex_escape("α=0.5 & R_3 → 100%") == r"$\alpha$=0.5 \& R\_3 $\to$ 100\%"
