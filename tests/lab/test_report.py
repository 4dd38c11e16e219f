"""The lab report is analysis/findings.py on the lab's sweep: the same rows `analyze findings` prints."""

import json

import numpy as np
import polars as pl
import pytest

from backend.analysis.findings import FINDINGS, STATUSES, findings
from backend.analysis.findings_text import findings_table
from backend.analysis.frame import to_outcomes
from backend.lab.report import lab_experiment, reward_disagreement

ALPHAS = [-0.5, 0.0, 0.5, 1.0, 1.5]


def outcomes(cells):
    """cells[(problem, alpha)] = (correct, opt, corr, fmt) out of n = sum."""
    rows = []
    for (p, a), (c, o, w, f) in cells.items():
        rows.append({"checkpoint_id": f"m{a}", "problem_id": f"p{p:02d}", "n": c + o + w + f, "correct": c,
                     "optimization_failure": o, "correctness_failure": w, "format_failure": f, "alpha": a,
                     "kind": "merged", "label": f"α={a:g}", "title": f"P{p}", "difficulty": "hard"})  # fmt: skip
    return to_outcomes(pl.DataFrame(rows))


def test_textbook_frontier_rows_are_json_with_the_documented_keys():
    """Solve rate flat at 4/16; optimization failures fall with α, correctness failures rise."""
    cells = {}
    for p in range(30):
        for i, a in enumerate(ALPHAS):
            opt = 10 - 2 * i
            cells[(p, a)] = (4, opt, 12 - opt, 0)
    rows = json.loads(json.dumps(findings(outcomes(cells))))
    assert [r["finding"] for r in rows] == list(FINDINGS)
    assert {"finding", "status", "statistic", "ci_low", "ci_high", "criterion"} <= set(rows[0])
    assert [r["status"] for r in rows[:2]] == ["shows", "shows"]
    assert all(r["status"] in STATUSES for r in rows)
    assert rows[0]["statistic"] == (8 - 4) / 16  # opt(α=0) − opt(α=1): every problem alike
    table = findings_table(rows)
    assert table.startswith("| finding |") and "**shows**" in table


def test_a_flat_sweep_shows_no_frontier():
    """Nothing moves with α: the failure shares' CIs are [0, 0], so F1 clearly does not show."""
    cells = {(p, a): (8, 4, 4, 0) for p in range(20) for a in ALPHAS}
    rows = findings(outcomes(cells))
    assert rows[0]["status"] == "does_not_show" and rows[0]["statistic"] == 0.0
    assert rows[1]["status"] == "not_tested" and rows[1]["reason"].startswith("F1's direction does not hold")
    assert not np.isnan(rows[3]["statistic"])


def test_lab_experiment_without_a_manifest_is_none(store, tmp_path):
    assert lab_experiment(store, tmp_path) is None


def test_reward_disagreement_from_step_metrics_counts_the_rollouts_two_rewards_score_apart():
    """Each rollout judged on tests of tiers 1-5 passing or failing at random; the steps' logged
    summaries (RewardStats, what the trainer stores) against a direct count over the rollouts."""
    from backend.records import TestResult, reward_value, rewards
    from backend.rl.rewards import RewardStats

    rng = np.random.default_rng(0)
    steps, scored = [], []
    for _ in range(40):
        stats = RewardStats()
        for _ in range(16):
            fail_from = rng.integers(1, 8)  # the first failing tier; 6 and 7: none of tiers 1-5 fails
            tests = [
                TestResult(i, 2 * 10 ** (t - 1), t, "WA" if t >= fail_from else "AC") for i, t in enumerate(range(1, 6))
            ]
            r = rewards(tests)
            stats.outcomes.append("correct" if r.R_inf else "correctness_failure")
            stats.tier_passed.append({k: reward_value(r, k) for k in ("R_1", "R_3", "R_5", "R_inf")})
            scored.append(r)
        steps.append(stats.summary())
    for a, b in (("R_3", "R_inf"), ("R_1", "R_5"), ("R_inf", "R_3")):
        direct = sum(reward_value(r, a) != reward_value(r, b) for r in scored) / len(scored)
        assert 0.1 < direct < 0.9
        assert reward_disagreement(steps, a, b) == pytest.approx(direct)
