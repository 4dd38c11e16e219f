"""CI bands on pass@k (backend/analysis/ensembles.mean_with_ci, pool_bands), against references
computed independently: subset enumeration for per-problem pass@k, fractions and the stdlib for
the mean and standard deviation, scipy's t quantile, and Hall's skewness correction solved by
bisection (tests/analysis/test_intervals.py's reference); each end the farther of the two."""

import itertools
import math
import statistics
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import t as student_t

from backend.analysis.ensembles import mean_with_ci, pool_bands
from backend.analysis.frame import Outcomes
from tests.analysis.test_intervals import hall_reference


def reference(values) -> tuple[float, float]:
    """The band of per-problem values, independently: t with P − 1 degrees of freedom (the stdlib's
    mean and sd) and Hall's interval by bisection, each end the farther; clipped to [0, 1]."""
    floats = np.array([float(v) for v in values])
    P, mean = len(floats), float(sum(values) / len(values))
    half = student_t.ppf(0.975, P - 1) * statistics.stdev(floats) / math.sqrt(P)
    h_lo, h_hi = hall_reference(floats, 0.95)
    return max(0.0, min(mean - half, h_lo)), min(1.0, max(mean + half, h_hi))


def enumerated_pass_at_k(n: int, c: int, k: int) -> Fraction:
    """Share of the k-subsets of n samples (the first c correct) holding a correct one."""
    subsets = list(itertools.combinations(range(n), k))
    return Fraction(sum(any(s < c for s in sub) for sub in subsets), len(subsets))


def outcomes(n: list[list[int]], c: list[list[int]]) -> Outcomes:
    """problems × checkpoints counts; only `correct` matters to pass@k."""
    n, c = np.array(n), np.array(c)
    P, C = n.shape
    ids = [f"c{i}" for i in range(C)]
    counts = {"correct": c, "optimization_failure": n - c, "correctness_failure": 0 * n, "format_failure": 0 * n}
    return Outcomes(
        [f"p{i}" for i in range(P)], ["t"] * P, ["easy"] * P, ids, ids, [0.0] * C, ["endpoint"] * C, n, counts
    )


def test_hand_computed_band_of_three_problems():
    """n = 4 samples, c = 0, 2, 4 correct, k = 2: pass@2 = 0, 1 − C(2,2)/C(4,2) = 5/6, 1."""
    values = [Fraction(0), Fraction(5, 6), Fraction(1)]
    band = pool_bands(outcomes([[4], [4], [4]], [[0], [2], [4]]), {"one": ["c0"]}).filter(k=2).row(0, named=True)
    assert band["pass_at_k"] == pytest.approx(11 / 18, abs=1e-12)
    assert (band["lo"], band["hi"]) == pytest.approx(reference(values), abs=1e-9)
    assert band["n_problems"] == 3 and band["members"] == 1


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_single_checkpoint_band_matches_enumeration_and_stdlib(k):
    rng = np.random.default_rng(k)
    n = rng.integers(5, 8, size=12)
    c = np.array([int(rng.integers(0, m + 1)) for m in n])
    per_problem = [enumerated_pass_at_k(int(a), int(b), k) for a, b in zip(n, c, strict=True)]
    mean = float(sum(per_problem) / len(per_problem))
    row = pool_bands(outcomes(n[:, None].tolist(), c[:, None].tolist()), {"x": ["c0"]}).filter(k=k).row(0, named=True)
    assert row["pass_at_k"] == pytest.approx(mean, abs=1e-12)
    assert (row["lo"], row["hi"]) == pytest.approx(reference(per_problem), abs=1e-9)


def test_pool_of_two_band_matches_enumeration():
    """k = 2 over two members: one sample of each, so a problem's pool pass@2 is
    1 − (1 − c₁/n₁)(1 − c₂/n₂); the band is over these per-problem values."""
    n = [[4, 5], [4, 5], [4, 5], [4, 5]]
    c = [[0, 0], [1, 0], [2, 5], [0, 3]]
    per_problem = [1 - (1 - Fraction(a, 4)) * (1 - Fraction(b, 5)) for a, b in c]
    mean = float(sum(per_problem) / 4)
    bands = pool_bands(outcomes(n, c), {"pool": ["c0", "c1"]})
    row = bands.filter(k=2).row(0, named=True)
    assert row["pass_at_k"] == pytest.approx(mean, abs=1e-12)
    assert (row["lo"], row["hi"]) == pytest.approx(reference(per_problem), abs=1e-9)
    assert bands["k"].to_list() == list(range(1, 5))  # min n = 4 caps every curve at k = 4


def test_band_clipped_to_shares_and_degenerate_cases():
    mean, lo, hi = mean_with_ci(np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]))
    assert mean.tolist() == pytest.approx([2 / 3, 1 / 3])
    assert lo.tolist() == [0.0, 0.0] and hi.tolist() == [1.0, 1.0]  # 3 problems: t(2) alone spans ±1.43, clipped
    assert (lo[1], hi[1]) == pytest.approx(reference([0.0, 0.0, 1.0]), abs=1e-9)
    mean, lo, hi = mean_with_ci(np.array([[0.4, 0.7]]))  # one problem: nothing to vary over
    assert lo.tolist() == hi.tolist() == mean.tolist() == [0.4, 0.7]
    mean, lo, hi = mean_with_ci(np.full((5, 1), 0.25))
    assert lo[0] == hi[0] == 0.25


def test_band_covers_the_true_mean_at_about_95_percent():
    """Coverage: 40 problems drawn with pass@1 uniform on [0.2, 0.8] (population mean 0.5), 16
    samples each; the band should hold 0.5 in about 95% of 2,000 seeded repetitions (a bounded,
    symmetric population: the skewness widening rarely moves an end)."""
    rng = np.random.default_rng(0)
    hits = 0
    for _ in range(2000):
        c = rng.binomial(16, rng.uniform(0.2, 0.8, 40))
        _, lo, hi = mean_with_ci((c / 16)[:, None])
        hits += lo[0] <= 0.5 <= hi[0]
    assert 0.92 <= hits / 2000 <= 0.98
