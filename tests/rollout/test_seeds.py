"""Seeds across the checkpoints of a job: disjoint by default (checkpoint c draws S + c·P·n + i·n + k),
common with `common_seeds` (every checkpoint S + i·n + k, the draws of every experiment stored
before the option existed). Through the vLLM stand-in, whose completions show the noise their
seed drew, and through the tiny transformers engine, against rollouts of the same model whose
seeds are known."""

import pytest

from backend.lab.tiny import make_tiny_checkpoint
from backend.records import Checkpoint, Experiment, Job, Sample
from backend.rollout.spec import SamplingSpec
from backend.store import Store
from tests.rollout.vllm_standin import EVENTS

SLUGS = ["max-subarray", "gcd-of-array", "balanced-brackets"]
PROBLEMS = [f"builtin/{s}" for s in SLUGS]
SEED, N = 11, 2


@pytest.fixture
def store(tmp_path, monkeypatch):
    from backend.problems.build import build_builtin

    monkeypatch.setenv("FLAB_CACHE", str(tmp_path / "cache"))
    store = Store(tmp_path / "seeds.duckdb")
    build_builtin(store, only=SLUGS, progress=False)
    return store


def run_sweep(store, **fields) -> str:
    from backend.jobs import runner
    from backend.sweep.spec import SweepSpec, validate_spec

    spec = {"problems": PROBLEMS, "n": N, "seed": SEED, "alphas": "0,1", "temperature": 0.7, **fields}
    job = runner.create_job(store, validate_spec(SweepSpec, spec))
    runner.run_job_here(store, job.id)
    assert store.get(Job, job.id).status == "done", store.get(Job, job.id).error
    return job.experiment_id


def by_checkpoint(store, exp: str) -> dict[str, dict[tuple[str, int], str]]:
    out: dict[str, dict] = {}
    for s in store.select(Sample, {"experiment_id": exp}):
        out.setdefault(s.checkpoint_id, {})[(s.problem_id, s.sample_idx)] = s.completion
    return out


@pytest.mark.slow
@pytest.mark.parametrize("common", [False, True])
def test_vllm_sweep_seeds_are_disjoint_across_checkpoints_unless_common(vllm, bf16_pair, store, common):
    low, high = bf16_pair
    exp = run_sweep(store, low=low, high=high, engine="vllm", live_switch=True, max_tokens=16, common_seeds=common)
    drawn = sorted(e[1] for e in EVENTS if e[0] == "sample")
    per_checkpoint = len(PROBLEMS) * N
    if common:  # today's draws: every checkpoint S + i·n + k
        assert drawn == sorted(list(range(SEED, SEED + per_checkpoint)) * 2)
    else:  # checkpoint c: S + c·P·n + i·n + k, each seed once in the experiment
        assert drawn == list(range(SEED, SEED + 2 * per_checkpoint))
    noise = [c.split("noise=")[1].split()[0] for cs in by_checkpoint(store, exp).values() for c in cs.values()]
    assert len(noise) == 2 * per_checkpoint and len(set(noise)) == (per_checkpoint if common else 2 * per_checkpoint)
    assert store.get(Experiment, exp).spec["common_seeds"] is common


@pytest.mark.slow
def test_transformers_sweep_draws_what_rollouts_with_its_seed_blocks_draw(store, tmp_path):
    """One model at both α (identical endpoints): checkpoint c's samples are exactly a rollout of
    that model with seed S + c·P·n; with common seeds both are the rollout with seed S."""
    from backend.rollout.run import RolloutSpec, run_rollout

    model = str(make_tiny_checkpoint(tmp_path / "model", seed=5))
    fields = {"low": model, "high": model, "allow_same_endpoints": True, "engine": "transformers", "max_tokens": 12}
    disjoint, common = (by_checkpoint(store, run_sweep(store, **fields, common_seeds=c)) for c in (False, True))

    def rollout(seed: int) -> dict:
        spec = RolloutSpec(checkpoint=model, problems=PROBLEMS, engine="transformers",
                           sampling=SamplingSpec(n=N, temperature=0.7, seed=seed, max_tokens=12))  # fmt: skip
        return next(iter(by_checkpoint(store, run_rollout(store, spec, progress=False)).values()))

    first, second = rollout(SEED), rollout(SEED + len(PROBLEMS) * N)
    assert first != second  # the two seed blocks draw different samples
    alpha = {c.id: c.alpha for c in store.select(Checkpoint)}
    at = {alpha[c]: samples for c, samples in disjoint.items()}
    assert at[0.0] == first and at[1.0] == second  # points in α order: α = 0 is checkpoint 0
    assert all(samples == first for samples in common.values())  # common seeds: today's draws at every α


def test_a_sweep_stored_before_common_seeds_resumes_with_common_seeds():
    import json

    from backend.sweep.spec import EvalSpec, SweepSpec, stored_spec

    new = json.loads(SweepSpec(low="a", high="b").model_dump_json())
    old = {k: v for k, v in new.items() if k != "common_seeds"}
    assert SweepSpec(**stored_spec("sweep", new)).common_seeds is False  # stored with the experiment
    assert SweepSpec(**stored_spec("sweep", old)).common_seeds is True
    assert EvalSpec(**stored_spec("eval", {"checkpoints": ["c"]})).common_seeds is True
