"""The fourth design's difference-in-differences (backend/analysis/did.py), against values worked
out by hand: per-problem changes of hand-made outcome counts, Welch's interval from its textbook
formula, and the status rules written as a table."""

import numpy as np
import pytest

from backend.analysis.did import difference_in_differences, endpoint_change, status_of
from backend.analysis.frame import Outcomes


def outcomes(corr: list[tuple[int, int]], n: int = 16, alphas=(0.0, 0.5, 1.0)) -> Outcomes:
    """Problems p0, p1, … whose correctness failures are (at α = 0, at α = 1) of n samples; α = 0.5
    holds n correctness failures, which no endpoint change may read."""
    problems = [f"p{i}" for i in range(len(corr))]
    names = [f"α={a:g}" for a in alphas]
    at = {0.0: 0, 1.0: 1}
    failures = np.array([[c[at[a]] if a in at else n for a in alphas] for c in corr])
    zeros = np.zeros_like(failures)
    return Outcomes(problems, problems, [None] * len(corr), names, names, list(alphas), ["merged"] * len(alphas),
                    np.full(failures.shape, n), {"correct": n - failures, "correctness_failure": failures,
                    "optimization_failure": zeros, "format_failure": zeros})  # fmt: skip


def test_the_endpoint_change_is_each_problems_share_at_alpha_1_minus_at_alpha_0():
    o = outcomes([(0, 6), (4, 2), (16, 16)])
    assert endpoint_change(o, ["p0", "p1", "p2"]).tolist() == [6 / 16, -2 / 16, 0.0]
    assert endpoint_change(o, ["p2", "p0", "nowhere"]).tolist() == [0.0, 6 / 16]  # in the order asked
    assert endpoint_change(outcomes([(0, 6)], alphas=(0.0, 0.5)), ["p0"]).size == 0  # no θ_high: nothing


def test_a_constant_difference_has_a_point_ci_and_shows():
    did = difference_in_differences(np.array([0.5, 0.5, 0.5]), np.array([0.1, 0.1]))
    assert (did.statistic, did.ci_low, did.ci_high) == pytest.approx((0.4, 0.4, 0.4))
    assert (did.status, did.withheld_change, did.kept_change, did.problems) == ("shows", 0.5, 0.1, (3, 2))


def test_the_ci_is_welchs_t_interval_by_its_formula():
    """Withheld changes {0, 0.5, 1} (mean 0.5, s² 0.25), kept {0, 0.2} (mean 0.1, s² 0.02): se² is
    0.25/3 + 0.02/2 = 0.09333 and Welch–Satterthwaite's ν = se⁴ / ((0.25/3)²/2 + 0.01²/1) = 2.4386;
    the 95 % CI is 0.4 ± t(0.975, ν)·se, which holds both 0 and the needed 0.1 (underpowered)."""
    from scipy.stats import t

    se2 = 0.25 / 3 + 0.02 / 2
    nu = se2**2 / ((0.25 / 3) ** 2 / 2 + 0.01**2 / 1)
    half = t.ppf(0.975, nu) * se2**0.5
    did = difference_in_differences(np.array([0.0, 0.5, 1.0]), np.array([0.0, 0.2]))
    assert nu == pytest.approx(2.4386, abs=1e-4)
    assert (did.statistic, did.ci_low, did.ci_high) == pytest.approx((0.4, 0.4 - half, 0.4 + half))
    assert did.status == "underpowered" and did.ci_low < 0 < 0.1 < did.ci_high
    narrow = difference_in_differences(np.array([0.5, 0.55, 0.6, 0.5]), np.array([0.1, 0.15, 0.1]))
    assert narrow.status == "shows" and narrow.ci_low > 0  # the same rule once the spread is small


def test_a_set_of_one_problem_has_no_variance_and_is_not_tested():
    did = difference_in_differences(np.array([0.0, 1.0]), np.array([0.0]))
    assert (did.status, did.statistic, did.ci_low, did.problems) == ("not_tested", None, None, (2, 1))


@pytest.mark.parametrize(
    "ci, status",
    [((0.01, 0.30), "shows"), ((0.0, 0.30), "underpowered"), ((-0.05, 0.10), "underpowered"),
     ((-0.05, 0.09), "does_not_show"), ((-0.30, -0.01), "does_not_show")],
)  # fmt: skip
def test_statuses_follow_the_findings_rules(ci, status):
    """shows: CI above 0; underpowered only when it holds both 0 and the needed 0.1; else does not show."""
    assert status_of(*ci, needed=0.1) == status


def test_an_empty_set_is_not_tested():
    did = difference_in_differences(np.array([]), np.array([0.1, 0.2]))
    assert (did.status, did.statistic, did.problems) == ("not_tested", None, (0, 2))


def test_power_by_simulation_finds_a_large_effect_and_rarely_a_null_one():
    """On sweeps drawn by the power model: correctness failures on the withheld set rising from 10 %
    to 90 % of failures (opt share 0.9 → 0.1, nothing solved) against a kept set with no change show
    in nearly every run; with the same shares at both endpoints, rarely (the 95 % CI's one tail)."""
    from backend.analysis.did import did_power
    from backend.analysis.power import PowerSpec

    kept = PowerSpec(problems=8, n=8, solve_rate=0.4, churn=0.0, opt_share_low=0.7, opt_share_high=0.7)
    effect = PowerSpec(problems=8, n=8, solve_rate=0.02, churn=0.0, opt_share_low=0.9, opt_share_high=0.1)
    assert did_power(effect, kept, runs=30)["shows"] >= 0.9
    null = did_power(effect.null(), kept, runs=30)
    assert null["shows"] <= 0.2 and sum(null.values()) == pytest.approx(1.0)
