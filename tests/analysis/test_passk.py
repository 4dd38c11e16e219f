import itertools
import math

import numpy as np
import pytest

from backend.analysis.passk import ensemble_pass_at_k, pass_at_k, pass_at_k_curve


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


def test_ensemble_single_member_equals_pass_at_k():
    n, c = np.array([[16], [16]]), np.array([[4], [0]])
    np.testing.assert_allclose(ensemble_pass_at_k(n, c, 5), pass_at_k(n[:, 0], c[:, 0], 5))


def brute_force_pool(n: list[int], c: list[int], k: int) -> float:
    """Enumerate every choice of which r = k mod M members get one extra sample, and within each,
    every k_m-subset of every member's samples: the exact chance that some drawn sample is correct."""
    members, (base, r) = len(n), divmod(k, len(n))
    chances = []
    for extra in itertools.combinations(range(members), r):
        shares = [base + (m in extra) for m in range(members)]
        miss = 1.0
        for m, k_m in enumerate(shares):
            draws = list(itertools.combinations(range(n[m]), k_m))  # samples 0…c_m−1 are the correct ones
            miss *= sum(all(s >= c[m] for s in d) for d in draws) / len(draws)
        chances.append(1.0 - miss)
    return sum(chances) / len(chances)


@pytest.mark.parametrize(("n", "c", "k"), [([6, 5, 7], [1, 0, 3], 1), ([6, 5, 7], [1, 0, 3], 2),
                                           ([6, 5, 7], [1, 0, 3], 4), ([6, 5, 7], [1, 0, 3], 5),
                                           ([4, 4, 4, 4], [0, 1, 2, 4], 3),
                                           ([5, 6], [2, 0], 3), ([3, 3, 3, 3, 3], [0, 0, 1, 0, 2], 2)])  # fmt: skip
def test_pool_pass_at_k_is_the_expectation_over_where_the_remainder_goes(n, c, k):
    got = ensemble_pass_at_k(np.array([n]), np.array([c]), k)[0]
    assert got == pytest.approx(brute_force_pool(n, c, k), abs=1e-12)


def test_pool_pass_at_1_is_the_members_mean_not_the_first_member():
    """k = 1 over M members: one sample from a uniformly random member."""
    n, c = np.array([[8, 8, 8]]), np.array([[0, 4, 8]])
    assert ensemble_pass_at_k(n, c, 1)[0] == pytest.approx((0 + 0.5 + 1) / 3)


def test_ensemble_exact_value():
    n, c = np.array([[10, 10]]), np.array([[2, 5]])
    first = (math.comb(8, 3) / math.comb(10, 3)) * (math.comb(5, 2) / math.comb(10, 2))  # 3 + 2 samples
    second = (math.comb(8, 2) / math.comb(10, 2)) * (math.comb(5, 3) / math.comb(10, 3))  # 2 + 3 samples
    want = 1 - (first + second) / 2  # the fifth sample goes to either member with chance 1/2
    assert ensemble_pass_at_k(n, c, 5)[0] == pytest.approx(want)
