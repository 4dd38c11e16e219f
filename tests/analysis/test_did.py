"""The fourth design's difference-in-differences (backend/analysis/did.py), against values worked
out by hand: per-problem changes of hand-made outcome counts, an exact bootstrap distribution, and
the status rules written as a table."""

import numpy as np
import pytest

from backend.analysis.did import DidSpec, difference_in_differences, endpoint_change, status_of
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


def test_the_ci_is_the_exact_bootstrap_distributions_percentiles():
    """Withheld changes {0, 1}, kept {0}: a resampled withheld mean is 0, 0.5 or 1 with probabilities
    1/4, 1/2, 1/4, so the 2.5th and 97.5th percentiles are 0 and 1: the CI holds both 0 and the
    needed 0.1 (underpowered). Half the replicates are 0.5 (within 3 binomial sd)."""
    spec = DidSpec(replicates=4000)
    did = difference_in_differences(np.array([0.0, 1.0]), np.array([0.0]), spec)
    assert (did.statistic, did.ci_low, did.ci_high, did.status) == (0.5, 0.0, 1.0, "underpowered")
    rng = np.random.default_rng(spec.seed)  # the same draws, counted
    means = rng.integers(0, 2, (spec.replicates, 2)).mean(axis=1)
    assert abs((means == 0.5).mean() - 0.5) <= 3 * (0.25 / spec.replicates) ** 0.5


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
    assert did_power(effect, kept, runs=30, spec=DidSpec(replicates=500))["shows"] >= 0.9
    null = did_power(effect.null(), kept, runs=30, spec=DidSpec(replicates=500))
    assert null["shows"] <= 0.2 and sum(null.values()) == pytest.approx(1.0)
