"""Counts the tests check the product against, made straight from the stored rows."""

from collections import Counter

from backend.records import Evaluation


def solved_pairs(store, experiment: str, at_least: float, checkpoints: set[str] | None = None) -> set[tuple[str, str]]:
    """(checkpoint, problem) pairs whose pass rate is ≥ at_least (only `checkpoints`, if given)."""
    correct, total = Counter(), Counter()
    for e in store.select(Evaluation, {"experiment_id": experiment}):
        if checkpoints is None or e.checkpoint_id in checkpoints:
            total[e.checkpoint_id, e.problem_id] += 1
            correct[e.checkpoint_id, e.problem_id] += e.outcome == "correct"
    return {key for key, n in total.items() if correct[key] / n >= at_least}
