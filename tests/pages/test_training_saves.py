"""The Training page says what a save in the base's dtype kept of the RL update (issue #46)."""

from backend.records import Experiment, Metric
from tests.pages.test_apptest import app


def test_training_page_warns_when_a_bf16_save_lost_most_of_the_update(store, db_path, monkeypatch):
    store.put([Experiment(id="rl-x", kind="rl", name="GRPO test run", spec={})])
    store.put([Metric("rl-x", step, "reward_mean", step / 4) for step in (1, 2)])
    store.put([Metric("rl-x", 2, "saved_update_kept_share", 0.031), Metric("rl-x", 2, "saved_update_norm_ratio", 0.2)])
    at = app(db_path, monkeypatch, "training", {"run": "rl-x"})
    assert not at.exception, at.exception
    (warning,) = at.warning
    assert "step 2" in warning.value and "kept the update of 3.1% of the weights" in warning.value
    assert len(at.get("plotly_chart")) == 1  # the reward; the save's figures are not a curve
