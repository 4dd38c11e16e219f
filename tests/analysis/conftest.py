import numpy as np
import pytest

from backend.records import Checkpoint, Evaluation, Experiment, Problem


def fill_experiment(store, outcomes: dict, alphas: dict, difficulty: dict | None = None, exp="exp-a"):
    """outcomes[(checkpoint, problem)] = list of outcome names, one per sample."""
    store.put([Experiment(id=exp, kind="sweep", name="test")])
    store.put([Checkpoint(id=c, path=f"/x/{c}", kind="merged" if a is not None else "trained", alpha=a, label=c)
               for c, a in alphas.items()])  # fmt: skip
    problems = sorted({p for _, p in outcomes})
    store.put([Problem(id=p, bench="t", title=p.upper(), statement="-", difficulty=(difficulty or {}).get(p, "easy"))
               for p in problems])  # fmt: skip
    rows = [Evaluation(experiment_id=exp, checkpoint_id=c, problem_id=p, sample_idx=i, outcome=o)
            for (c, p), outs in outcomes.items() for i, o in enumerate(outs)]  # fmt: skip
    store.put(rows)


@pytest.fixture
def synthetic_outcomes():
    """A random but fixed experiment: 5 checkpoints along α, 30 problems, 12 samples each."""
    rng = np.random.default_rng(3)
    alphas = {"a-0.5": -0.5, "a0": 0.0, "a0.5": 0.5, "a1": 1.0, "a1.5": 1.5}
    classes = np.array(["correct", "optimization_failure", "correctness_failure", "format_failure"])
    outcomes = {}
    for c, a in alphas.items():
        for p in range(30):
            probs = np.array([0.3 + 0.02 * (p % 5), 0.1 + 0.2 * (1 - a / 2), 0.1 + 0.2 * a / 2, 0.05])
            probs = np.clip(probs, 0.01, None)
            outcomes[(c, f"p{p:02d}")] = list(rng.choice(classes, size=12, p=probs / probs.sum()))
    return outcomes, alphas
