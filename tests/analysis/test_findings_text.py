"""The findings in words (backend/analysis/findings_text.py), on rows the findings module writes."""

import numpy as np

from backend.analysis.findings import FindingsSpec, above_zero, equivalent
from backend.analysis.findings_text import ci_with_level, findings_table, overview_rows, status_sentence


def test_a_status_is_a_sentence_with_its_number_and_the_ci_level_its_criterion_uses():
    """The issue's case: the solve rate rose +0.111 and the flat criterion, decided on a 90 % CI,
    is not met; the sentence says 90 %, not the 95 % the other parts use."""
    spec = FindingsSpec()
    reps = np.linspace(0.02, 0.20, 101)  # a 90 % CI of about [+0.029, +0.191]: outside ±0.05, not flat
    flat = equivalent("solve rate change", 0.111, reps, spec).__dict__
    lo, hi = np.percentile(reps, [5, 95])
    assert flat["status"] == "underpowered"  # the CI still holds changes inside ±0.05
    row = {"finding": "frontier", "status": flat["status"], "statistic": 0.111, "ci_low": flat["ci_low"],
           "ci_high": flat["ci_high"], "criterion": "F1", "reason": "", "parts": [flat]}  # fmt: skip
    assert status_sentence(row, flat) == (
        f"solve rate change: +0.111 (90 % CI {lo:+.3f} to {hi:+.3f}): the criterion is not met, but the CI still "
        "reaches the effect it needs (underpowered)."
    )
    assert ci_with_level(flat) == f"90 % CI [{lo:+.3f}, {hi:+.3f}]"
    rises = above_zero("correctness rises", 0.2, np.linspace(0.1, 0.3, 101), spec, "rises").__dict__
    assert ci_with_level(rises).startswith("95 % CI [")
    assert "| 90 % CI [" in findings_table([row])  # the finding's line states the level of the part it comes from


def test_churn_names_its_null_quantile_in_the_sentence_and_keeps_the_ci_apart():
    criterion = "problems solved … minus the mean under a no-churn model; shows above its 95% quantile, +2.05"
    part = {"name": "union − best single beyond the no-churn null (problems)", "status": "does_not_show",
            "statistic": 0.5, "ci_low": -1.0, "ci_high": 1.9, "criterion": criterion}  # fmt: skip
    row = {"finding": "churn", **part, "reason": "", "parts": [part]}
    (words,) = overview_rows([row])
    assert words["in words"] == (
        "union − best single beyond the no-churn null (problems): +0.500; the criterion needs more than +2.05, "
        "the 95% quantile of its no-churn null: not met (does not show)."
    )
    assert words["CI"] == "CI [-1.000, +1.900]" and "quantile" not in words["CI"] and words["estimate"] == "+0.500"
