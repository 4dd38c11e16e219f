import numpy as np
import pytest

from backend.records import Checkpoint, Evaluation, Experiment, Problem, Sample, Test, TestResult
from tests.pages.browser import cold_server, lab_server, page, server  # noqa: F401  (fixtures)


@pytest.fixture
def populated(store):
    """An experiment filled through the store API: 5 α points and one independent checkpoint."""
    rng = np.random.default_rng(0)
    store.put([Experiment(id="exp-dash", kind="sweep", name="dashboard test sweep", note="synthetic test data",
                          spec={"alphas": [-0.5, 0, 0.5, 1, 1.5], "setting": "reasoning", "n": 6})])  # fmt: skip
    alphas = {"m-0.5": -0.5, "m0": 0.0, "m0.5": 0.5, "m1": 1.0, "m1.5": 1.5, "r3": None}
    store.put(
        [
            Checkpoint(id=c, path=f"/x/{c}", kind="merged" if a is not None else "trained", alpha=a, label=c)
            for c, a in alphas.items()
        ]
    )
    store.put([Problem(id=f"t/p{i}", bench="t", title=f"Problem {i}", statement=f"Statement {i}",
                       difficulty=("easy", "hard")[i % 2])
               for i in range(6)])  # fmt: skip
    store.put(
        [
            Test(problem_id=f"t/p{i}", idx=0, input="1\n", output="1\n", input_len=2, tier=1, is_public=True)
            for i in range(6)
        ]
    )
    classes = ["correct", "optimization_failure", "correctness_failure", "format_failure"]
    samples, evals = [], []
    for c in alphas:
        for i in range(6):
            for k in range(6):
                outcome = classes[int(rng.integers(0, 4))]
                code = None if outcome == "format_failure" else "print(1)\n"
                missing = None if code else "no fenced code block in the answer"
                samples.append(Sample(experiment_id="exp-dash", checkpoint_id=c, problem_id=f"t/p{i}", sample_idx=k,
                                      setting="reasoning", completion="```python\nprint(1)\n```", code=code,
                                      extract_error=missing))  # fmt: skip
                verdict = {
                    "correct": "AC",
                    "optimization_failure": "TLE",
                    "correctness_failure": "WA",
                    "format_failure": "FORMAT",
                }[outcome]
                evals.append(Evaluation(experiment_id="exp-dash", checkpoint_id=c, problem_id=f"t/p{i}", sample_idx=k,
                                        outcome=outcome, verdict=verdict,
                                        test_results=[TestResult(0, 2, 1, verdict, cpu_s=0.01, wall_s=0.01,
                                                                 mem_mb=9.0)]))  # fmt: skip
    store.put(samples)
    store.put(evals)
    return store


def copy_experiment(store, source: str, target: str, name: str) -> None:
    """A second experiment, cheaply: the source's rows under another id, with every correct sample
    of the first checkpoint turned into a wrong answer (so the two curves differ)."""
    import dataclasses

    exp = store.get(Experiment, source)
    store.put([dataclasses.replace(exp, id=target, name=name)])
    store.put([dataclasses.replace(s, experiment_id=target) for s in store.select(Sample, {"experiment_id": source})])
    evals = store.select(Evaluation, {"experiment_id": source})
    first = min(e.checkpoint_id for e in evals)
    store.put([dataclasses.replace(e, experiment_id=target, **({"outcome": "correctness_failure", "verdict": "WA"}
                                   if e.checkpoint_id == first and e.outcome == "correct" else {}))
               for e in evals])  # fmt: skip


@pytest.fixture
def two_experiments(populated):
    copy_experiment(populated, "exp-dash", "exp-dash-b", "second sweep")
    return populated
