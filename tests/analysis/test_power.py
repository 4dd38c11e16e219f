"""Power by simulation (backend/analysis/power.py): the simulated sweeps follow the documented model,
and the findings' tests show an effect often when it is large and rarely when there is none."""

import json

import numpy as np
import pytest

from backend.analysis.findings import FindingsSpec
from backend.analysis.power import PowerSpec, cell_probabilities, power, simulate_sweep
from tests.conftest import run_cli

FAST = FindingsSpec(splits=2)  # fewer splits, same criteria


def test_the_model_puts_the_set_optimization_shares_at_the_endpoints_and_no_churn_means_flat():
    spec = PowerSpec(problems=5, opt_share_low=0.8, opt_share_high=0.25, churn=0.0)
    probs = cell_probabilities(spec, np.random.default_rng(0))
    failures = probs["optimization_failure"] + probs["correctness_failure"]
    share = probs["optimization_failure"] / failures
    low, high = spec.alphas.index(0.0), spec.alphas.index(1.0)
    assert np.allclose(share[:, low], 0.8) and np.allclose(share[:, high], 0.25)
    # linear on the logit scale: at α = 2 the share is logit⁻¹(2·logit 0.25 − logit 0.8) (extrapolated)
    beyond = PowerSpec(alphas=[0, 1, 2], opt_share_low=0.8, opt_share_high=0.25, churn=0.0)
    share2 = cell_probabilities(beyond, np.random.default_rng(0))
    logit = np.log(0.25 / 0.75) * 2 - np.log(0.8 / 0.2)
    got = share2["optimization_failure"][:, 2] / (1 - share2["correct"][:, 2])
    assert np.allclose(got, 1 / (1 + np.exp(-logit)))
    assert np.allclose(probs["correct"], probs["correct"][:, :1])  # churn 0: every α alike
    assert np.allclose(sum(probs.values()), 1.0)


def test_with_churn_each_problem_peaks_at_its_own_alpha_while_the_average_stays_level():
    spec = PowerSpec(problems=2000, churn=2.0, problem_sd=0.0, alphas="-1:3:0.5")
    solve = cell_probabilities(spec, np.random.default_rng(1))["correct"]
    assert len(set(solve.argmax(axis=1))) == len(spec.alphas)  # every α is some problem's best
    assert np.ptp(solve.mean(axis=0)) < 0.02  # but no α is better on average (uniform phases)


def test_simulated_counts_fill_every_cell_and_match_the_model_on_average():
    spec = PowerSpec(problems=2000, n=1024)
    o = simulate_sweep(spec, np.random.default_rng(2))
    probs = cell_probabilities(spec, np.random.default_rng(2))  # the same draws of problems
    assert (sum(o.counts.values()) == spec.n).all() and (o.n == spec.n).all()
    for cls, p in probs.items():  # per α, averaged over 2,000 problems: sd of the mean about 0.0004
        assert np.abs((o.counts[cls] / spec.n - p).mean(axis=0)).max() < 0.003, cls
    assert o.alphas == spec.alphas and o.kinds.count("endpoint") == 2


@pytest.mark.slow
def test_power_is_high_for_a_large_effect_and_the_false_positive_rate_low_with_none():
    frontier = PowerSpec(problems=60, opt_share_low=0.9, opt_share_high=0.1, churn=0.0, runs=10, seed=3)
    shows = {f: s["shows"] for f, s in power(frontier, FAST).items()}
    assert shows["frontier"] >= 0.9 and shows["extrapolation"] >= 0.9, shows
    churn = PowerSpec(problems=60, opt_share_low=0.5, opt_share_high=0.5, churn=3.0, runs=10, seed=4)
    assert power(churn, FAST)["churn"]["shows"] >= 0.9
    null = power(frontier.null().model_copy(update={"runs": 20}), FAST)
    assert null["frontier"]["shows"] == 0.0 and null["extrapolation"]["shows"] == 0.0
    assert null["churn"]["shows"] <= 0.15 and null["ensemble"]["shows"] <= 0.15  # 5 % tests, 20 draws
    for statuses in null.values():
        assert sum(statuses.values()) == pytest.approx(1.0)


def test_f4s_power_below_one_half_names_the_samples_per_cell_for_80_percent():
    """n·((t_0.975 + t_0.8)·se/gain)² with the simulated sweeps' mean gain and standard error."""
    from scipy.stats import t

    from backend.analysis.power import ensemble_line

    d = {"shows": 0.2, "gain": 0.03, "se": 0.02, "n": 16, "k": 4}
    scale = ((t.ppf(0.975, 39) + t.ppf(0.8, 39)) * 0.02 / 0.03) ** 2  # 3.55: 56.8 samples, rounded up to even
    assert ensemble_line(d, 40) == (
        f"F4 (ensemble, pass@4) shows in 20% of simulated sweeps at n = 16 per cell, below one half: about "
        f"{2 * int(np.ceil(16 * scale / 2))} samples per cell would give 80 % (mean gain +0.030)."
    )
    assert (
        ensemble_line(d | {"shows": 0.6}, 40)
        == "F4 (ensemble, pass@4) shows in 60% of simulated sweeps at n = 16 per cell."
    )
    assert "does not beat the best single" in ensemble_line(d | {"gain": -0.01}, 40)


def test_too_few_problems_are_reported_underpowered_not_flat():
    few = PowerSpec(problems=3, n=4, opt_share_low=0.5, opt_share_high=0.5, churn=0.0, runs=5)
    result = power(few, FAST)
    assert result["frontier"]["shows"] == 0.0
    assert result["frontier"]["underpowered"] + result["frontier"]["does_not_show"] == 1.0


@pytest.mark.slow
def test_the_cli_prints_power_and_refuses_a_grid_without_endpoints():
    res = run_cli("power", "--problems", "6", "--n", "4", "--runs", "2", "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert set(out) == {"effect", "null", "ensemble"}
    assert set(out["effect"]) == {"frontier", "extrapolation", "churn", "ensemble"}
    assert out["ensemble"].startswith("F4 (ensemble, pass@4) shows in ")
    for statuses in (*out["effect"].values(), *out["null"].values()):
        assert sum(statuses.values()) == pytest.approx(1.0) and all(v in (0, 0.5, 1) for v in statuses.values())
    bad = run_cli("power", "--alphas", "0.5:1.5:0.5")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "must hold both endpoints, 0 and 1" in bad.stderr
