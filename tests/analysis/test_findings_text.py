"""The findings in words (backend/analysis/findings_text.py), on rows the findings module writes."""

import numpy as np

from backend.analysis.churn import churn_stats
from backend.analysis.findings import FindingsSpec, above_zero, check_churn, equivalent
from backend.analysis.findings_text import (
    ci_with_level,
    excess_sentence,
    findings_table,
    overview_rows,
    power_sentence,
    status_sentence,
)
from tests.analysis.test_findings import ci, outcomes


def test_a_status_is_a_sentence_with_its_number_and_the_ci_level_its_criterion_uses():
    """The issue's case: the solve rate rose +0.111 and the flat criterion, decided on a 90 % CI,
    is not met; the sentence says 90 %, not the 95 % the other parts use."""
    spec = FindingsSpec()
    est = ci(0.029, 0.191)
    est.value = 0.111
    flat = equivalent("solve rate change", est, spec).__dict__
    assert flat["status"] == "underpowered"  # the CI still holds changes inside ±0.1
    row = {"finding": "frontier", "status": flat["status"], "statistic": 0.111, "ci_low": flat["ci_low"],
           "ci_high": flat["ci_high"], "criterion": "F1", "reason": "", "parts": [flat]}  # fmt: skip
    assert status_sentence(row, flat) == (
        "solve rate change: +0.111 (90 % CI +0.029 to +0.191): the criterion is not met, but the CI still "
        "reaches the effect it needs (underpowered)."
    )
    assert ci_with_level(flat) == "90 % CI [+0.029, +0.191]"
    rises = above_zero("correctness rises", ci(0.1, 0.3), spec, "rises").__dict__
    assert ci_with_level(rises).startswith("95 % CI [")
    assert "| 90 % CI [" in findings_table([row])  # the finding's line states the level of the part it comes from


def test_the_churn_page_and_the_overviews_f3_say_the_same_estimate_ci_level_and_status():
    """The review found the Churn page at +0.3 [−1.0, +1.0] and the Overview's F3 at −0.923
    [−1.548, −0.298] with no level: now one estimator, and both sentences carry its numbers."""
    rng = np.random.default_rng(3)
    o = outcomes(rng.binomial(16, rng.uniform(0.2, 0.8, (30, 1)), (30, 5)), 16, [-0.5, 0.0, 0.5, 1.0, 1.5])
    excess = churn_stats(o)["union_excess"]
    f3 = check_churn(o, FindingsSpec()).to_dict()
    (row,) = overview_rows([f3])
    numbers = f"{excess['estimate']:+.3f}", f"95 % CI {excess['lo']:+.3f} to {excess['hi']:+.3f}"
    assert all(n in excess_sentence(excess) for n in numbers) and all(n in row["in words"] for n in numbers)
    assert row["CI"] == f"95 % CI [{excess['lo']:+.3f}, {excess['hi']:+.3f}]"
    assert row["status"].replace(" ", "_") == excess["status"] and excess["against"] in row["in words"]


def test_f4s_power_is_said_in_words_below_one_half_only():
    low = {"finding": "ensemble", "power": {"effect": 0.02, "k": 4, "n": 16, "problems": 40, "power": 0.14,
                                            "n_for_80": 158}}  # fmt: skip
    assert power_sentence(low) == (
        "At this size (40 problems, 16 samples per cell) F4 has 14% power to show a gain of +0.02 in pass@4: "
        "about 158 samples per cell would give 80 % (if its standard error shrinks as 1/√n)."
    )
    assert power_sentence({"finding": "ensemble", "power": {**low["power"], "power": 0.6}}) == ""
    assert power_sentence({"finding": "churn"}) == ""
