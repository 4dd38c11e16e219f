"""A job card's parameters read as words (issue #48): a switch is "yes"/"no", not Python's False."""

from backend.jobs.runner import parameters


def test_a_job_cards_switches_read_yes_or_no():
    shown = dict(parameters("sweep", {"low": "/a/low", "high": "/a/high", "alphas": [0.0, 0.5, 1.0],
                                      "live_switch": False}))  # fmt: skip
    assert shown["Switch α in the loaded model (write no merged folders)"] == "no"
    assert "False" not in shown.values() and shown["α grid"] == "0, 0.5, 1"
