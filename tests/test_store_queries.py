"""The store's analysis inputs under the dashboard's filters, against counts written out by hand.

The setting filter joins the samples `USING (experiment_id, …)`; while the checkpoint rows were
joined to every sample before grouping, their own `experiment_id` (an RL checkpoint's run) made
that name ambiguous and every query with a setting failed (a Binder Error on the Frontier)."""

import pytest

from backend.records import Checkpoint, Evaluation, Experiment, Problem, Sample
from backend.store_queries import SampleFilter

# (checkpoint, problem, sample) → (setting, outcome, first failing tier, verdict, finish reason, tokens)
ROWS = {
    ("m0", "p-easy", 0): ("reasoning", "correct", None, "AC", "stop", 10),
    ("m0", "p-easy", 1): ("tool", "optimization_failure", 2, "TLE", "stop", 20),
    ("m0", "p-hard", 0): ("tool", "format_failure", None, None, "length", 30),
    ("m0", "p-hard", 1): ("tool", "optimization_failure", 5, "TLE", "stop", 40),
    ("rl", "p-easy", 0): ("tool", "format_failure", None, "CE", "stop", 50),
    ("rl", "p-hard", 0): ("reasoning", "correctness_failure", 1, "WA", "stop", 60),
    ("rl", "p-hard", 1): ("tool", "sandbox_error", None, None, "stop", 70),  # counted nowhere
}


@pytest.fixture
def filled(store):
    store.put([Experiment(id="exp", kind="eval", name="filters")])
    store.put([Checkpoint(id="m0", path="/m0", kind="merged", alpha=0.0, label="α=0"),
               Checkpoint(id="rl", path="/rl", kind="trained", label="RL run", experiment_id="rl-run")])  # fmt: skip
    store.put(
        [
            Problem(id=p, bench="t", title=p, statement="-", difficulty=p.removeprefix("p-"))
            for p in ("p-easy", "p-hard")
        ]
    )
    store.put([Sample("exp", c, p, i, setting=s, finish_reason=f, completion_tokens=t)
               for (c, p, i), (s, _, _, _, f, t) in ROWS.items()])  # fmt: skip
    store.put([Evaluation("exp", c, p, i, outcome=o, first_failing_tier=tier, verdict=v)
               for (c, p, i), (_, o, tier, v, _, _) in ROWS.items()])  # fmt: skip
    return store


def test_outcome_counts_of_one_setting(filled):
    counts = filled.outcome_counts("exp", SampleFilter(setting="tool")).sort("checkpoint_id", "problem_id")
    # tool samples: m0/p-easy #1 (opt), m0/p-hard #0 (format), #1 (opt); rl/p-easy #0 (format);
    # rl/p-hard #1 is a sandbox error
    columns = [
        "checkpoint_id",
        "problem_id",
        "n",
        "correct",
        "optimization_failure",
        "format_failure",
        "label",
        "difficulty",
    ]
    assert counts.select(columns).rows() == [
        ("m0", "p-easy", 1, 0, 1, 0, "α=0", "easy"),
        ("m0", "p-hard", 2, 0, 1, 1, "α=0", "hard"),
        ("rl", "p-easy", 1, 0, 0, 1, "RL run", "easy"),
    ]
    hard = filled.outcome_counts("exp", SampleFilter(setting="tool", difficulty="hard"))
    assert hard.select("checkpoint_id", "problem_id", "n").rows() == [("m0", "p-hard", 2)]


def test_optimization_tiers_of_one_setting(filled):
    tiers = filled.optimization_tiers("exp", SampleFilter(setting="tool"))
    assert tiers.select("checkpoint_id", "label", "n", "tier_2", "tier_5", "tier_other").rows() == [
        ("m0", "α=0", 3, 1, 1, 0),  # α = 0 first; the RL checkpoint, without α, last
        ("rl", "RL run", 1, 0, 0, 0),
    ]
    assert filled.optimization_tiers("exp", SampleFilter(setting="reasoning"))["n"].to_list() == [1, 1]


def test_format_causes_of_one_setting_and_difficulty(filled):
    causes = filled.format_causes("exp", SampleFilter(setting="tool", difficulty="hard"))
    assert causes.select(
        "checkpoint_id", "problem_id", "n", "truncated", "compile_error", "no_code", "tokens"
    ).rows() == [
        ("m0", "p-hard", 2, 1, 0, 0, 70),  # the format failure was cut at the token limit
    ]
    easy = filled.format_causes("exp", SampleFilter(setting="tool", difficulty="easy")).sort("checkpoint_id")
    assert easy.select("checkpoint_id", "n", "compile_error", "tokens").rows() == [("m0", 1, 0, 20), ("rl", 1, 1, 50)]


def test_sandbox_errors_are_counted_per_checkpoint_under_the_filters(filled):
    """The one sandbox error of ROWS (rl, p-hard, tool) is in no class above and counted here, under
    the same filters as the rest: by setting and by difficulty."""
    assert filled.sandbox_errors("exp").rows() == [("rl", "RL run", None, 1)]
    hard_tool = SampleFilter(setting="tool", difficulty="hard")
    assert filled.sandbox_errors("exp", hard_tool).rows() == [("rl", "RL run", None, 1)]
    assert filled.sandbox_errors("exp", SampleFilter(setting="reasoning")).is_empty()
    assert filled.sandbox_errors("exp", SampleFilter(difficulty="easy")).is_empty()


def test_a_contest_window_keeps_the_dated_problems_inside_it_both_ends_included(filled):
    filled.put(
        [
            Problem(
                id="p-easy",
                bench="t",
                title="p-easy",
                statement="-",
                difficulty="easy",
                contest_date="2024-03-31T00:00:00",
            )
        ]
    )  # fmt: skip  (p-hard has no date)
    inside = filled.outcome_counts("exp", SampleFilter(since="2024-03-31", until="2024-03-31"))
    assert sorted(set(inside["problem_id"])) == ["p-easy"]  # the last day of the window is in it
    assert inside["n"].sum() == 3  # m0's two samples of p-easy and rl's one
    assert filled.outcome_counts("exp", SampleFilter(since="2024-04-01")).is_empty()
    assert filled.outcome_counts("exp", SampleFilter(until="2024-03-30")).is_empty()
    assert filled.problem_dates("exp") == {"dated": 1, "undated": 1, "first": "2024-03-31", "last": "2024-03-31"}
    # the counts are of the filters but the window: the window's own emptiness is said with them
    assert filled.problem_dates("exp", SampleFilter(difficulty="hard", since="2025-01-01"))["undated"] == 1
