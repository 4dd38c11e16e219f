import math

import numpy as np
import pytest

from backend.analysis.passk import ensemble_pass_at_k, pass_at_k, pass_at_k_curve, split_budget


def exact(n, c, k):
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def test_pass_at_k_equals_exact_combinatorics_on_random_triples():
    rng = np.random.default_rng(1)
    triples = [(int(n), int(rng.integers(0, n + 1)), int(rng.integers(1, n + 1))) for n in rng.integers(1, 300, 500)]
    triples += [
        (10, 0, 3),
        (10, 10, 1),
        (10, 8, 5),
        (5, 3, 5),
        (250, 1, 250),
        (250, 0, 250),
        (7, 2, 6),
    ]  # c = 0, n − c < k
    n, c, k = (np.array(x) for x in zip(*triples, strict=True))
    for kk in np.unique(k):
        sel = k == kk
        got = pass_at_k(n[sel], c[sel], int(kk))
        want = [exact(a, b, int(kk)) for a, b in zip(n[sel], c[sel], strict=True)]
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_curve_for_all_k_at_once():
    n, c = np.array([20, 20, 20]), np.array([0, 3, 20])
    curve = pass_at_k_curve(n, c)
    assert curve.shape == (3, 20)
    for p in range(3):
        for k in range(1, 21):
            assert curve[p, k - 1] == pytest.approx(exact(20, int(c[p]), k), abs=1e-12)


def test_k_above_n_is_undefined_not_wrong():
    assert np.isnan(pass_at_k_curve(np.array([3, 5]), np.array([1, 1]), 5)[0, 4])


def test_budget_split_is_even():
    assert split_budget(10, 3) == [4, 3, 3]
    assert split_budget(9, 3) == [3, 3, 3]
    assert sum(split_budget(250, 7)) == 250


def test_ensemble_single_member_equals_pass_at_k():
    n, c = np.array([[16], [16]]), np.array([[4], [0]])
    np.testing.assert_allclose(ensemble_pass_at_k(n, c, 5), pass_at_k(n[:, 0], c[:, 0], 5))


def test_ensemble_estimator_matches_monte_carlo():
    """Simulate the procedure: draw k_m samples without replacement from each member's n_m."""
    rng = np.random.default_rng(7)
    n = np.array([[12, 10, 14]])
    c = np.array([[1, 0, 3]])
    k = 8  # 3, 3, 2 samples from the three members
    estimate = ensemble_pass_at_k(n, c, k)[0]
    trials, hits = 20000, 0
    shares = split_budget(k, 3)
    for _ in range(trials):
        hit = False
        for m, k_m in enumerate(shares):
            pool = np.zeros(n[0, m], bool)
            pool[: c[0, m]] = True
            hit |= rng.choice(pool, size=k_m, replace=False).any()
        hits += hit
    p = hits / trials
    se = math.sqrt(p * (1 - p) / trials)
    assert abs(p - estimate) <= 3 * se


def test_ensemble_exact_value():
    n, c = np.array([[10, 10]]), np.array([[2, 5]])
    want = 1 - (math.comb(8, 3) / math.comb(10, 3)) * (math.comb(5, 2) / math.comb(10, 2))
    assert ensemble_pass_at_k(n, c, 5)[0] == pytest.approx(want)
