"""Jobs through engine openai with the strict stand-in as the served model (tests/rollout/openai_standin.py):
a disk sweep starts one server per α on the merged folder and stops it before the next, its samples
carry the seed rule's seeds, and a server that dies mid-point is started again and the point
resumes to exactly the rows of a run where nothing died. The same paths run against the real
`transformers serve` in tests/jobs/test_openai_sweep.py."""

import sys

import psutil
import pytest

from backend.errors import FieldError
from backend.records import Checkpoint, Evaluation, Experiment, Job, Sample
from backend.store import Store
from tests.conftest import ROOT
from tests.rollout.openai_rules import check

SLUGS = ["max-subarray", "gcd-of-array", "balanced-brackets"]
PROBLEMS = [f"builtin/{s}" for s in SLUGS]
LAB = ROOT / "artifacts" / "lab" / "checkpoints"
STANDIN = f"{sys.executable} -m tests.rollout.openai_standin --model {{model}} --port {{port}}"
SEED, N = 7, 2


@pytest.fixture
def store(tmp_path, monkeypatch):
    from backend.problems.build import build_builtin

    monkeypatch.setenv("FLAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(ROOT)
    store = Store(tmp_path / "openai.duckdb")
    build_builtin(store, only=SLUGS, progress=False)
    return store


def run_sweep(store, **fields) -> str:
    from backend.jobs import runner
    from backend.sweep.spec import SweepSpec, validate_spec

    spec = {"low": str(LAB / "low"), "high": str(LAB / "high"), "alphas": "0,1", "problems": PROBLEMS, "n": N,
            "seed": SEED, "temperature": 0.7, "max_tokens": 64, "engine": "openai", "serve": STANDIN,
            "concurrency": 2, "backend": "none", **fields}  # fmt: skip
    job = runner.create_job(store, validate_spec(SweepSpec, spec))
    runner.run_job_here(store, job.id)
    assert store.get(Job, job.id).status == "done", store.get(Job, job.id).error
    return job.experiment_id


def rows(store, exp: str) -> dict:
    """What a run stored, sample by sample: everything but timings, with the sample's verdict."""
    verdicts = {(e.checkpoint_id, e.problem_id, e.sample_idx): (e.verdict, e.outcome)
                for e in store.select(Evaluation, {"experiment_id": exp})}  # fmt: skip
    out = {}
    for s in store.select(Sample, {"experiment_id": exp}):
        key = (s.checkpoint_id, s.problem_id, s.sample_idx)
        turns = [{k: v for k, v in t.items() if k != "seconds"} for t in s.transcript]
        out[key] = (s.completion, s.code, s.finish_reason, s.prompt_tokens, s.completion_tokens, turns, verdicts[key])
    return out


def servers_of(folder: str) -> list[psutil.Process]:
    found = []
    for p in psutil.process_iter(["cmdline"]):
        if "tests.rollout.openai_standin" in (p.info["cmdline"] or []) and folder in p.info["cmdline"]:
            found.append(p)
    return found


@pytest.mark.slow
def test_a_disk_sweep_serves_each_alpha_and_a_server_dying_mid_point_changes_no_row(store, tmp_path, capfd):
    exp = run_sweep(store)
    stored = rows(store, exp)
    merged = {c.id: c for c in store.select(Checkpoint) if c.kind == "merged"}
    assert sorted(c.alpha for c in merged.values()) == [0.0, 1.0] and len(stored) == 2 * len(PROBLEMS) * N
    for (ckpt, problem, k), (completion, *_, turns, verdict) in stored.items():
        c = sorted(merged, key=lambda i: merged[i].alpha).index(ckpt)  # its place among the job's points
        i = sorted(PROBLEMS).index(problem)  # its place among the job's problems, in id order
        (assistant,) = [t for t in turns if t["role"] == "assistant"]
        assert assistant["seed"] == SEED + c * len(PROBLEMS) * N + i * N + k  # disjoint seeds, as every engine
        assert f"model={merged[ckpt].path[-12:]}" in completion  # sampled from its own merged folder
        assert verdict[0] in ("AC", "WA", "RE")
    assert all(servers_of(c.path) == [] for c in merged.values())  # each server stopped
    log = capfd.readouterr().out
    assert log.count("[server] stopped") == 2 and log.count("[server] ready on") == 2

    marker = tmp_path / "died-once"
    dying = f"{STANDIN} --die-after 4 --marker {marker}"
    again = run_sweep(store, serve=dying)
    assert marker.exists() and "starting it again (1/3)" in capfd.readouterr().out
    assert rows(store, again) == stored  # the point resumed exactly: every row as in the run where nothing died


def test_a_running_server_serves_one_checkpoint_and_no_other_engine_takes_one():
    from backend.sweep.spec import EvalSpec, SweepSpec

    with pytest.raises(FieldError, match="server_url serves one checkpoint and this job samples 3") as err:
        SweepSpec(low="a", high="b", alphas="0,0.5,1", engine="openai", server_url="http://127.0.0.1:8000")
    assert err.value.field == "server_url"
    with pytest.raises(FieldError, match="choose executor local"):
        EvalSpec(checkpoints=["a"], engine="openai", server_url="http://x", executor="ray")
    with pytest.raises(FieldError, match="turn live_switch off"):
        SweepSpec(low="a", high="b", alphas="0,1", engine="openai", serve=STANDIN, live_switch=True)
    with pytest.raises(FieldError, match="serve is for engine openai"):
        EvalSpec(checkpoints=["a"], serve=STANDIN)


def test_the_job_leases_gpus_for_a_server_it_starts_and_none_for_a_running_one():
    from backend.gpus import gpus_wanted
    from backend.sweep.spec import EvalSpec

    started = EvalSpec(checkpoints=["a"], engine="openai", serve=STANDIN, tensor_parallel_size=2)
    running = EvalSpec(checkpoints=["a"], engine="openai", server_url="http://127.0.0.1:8000")
    assert (gpus_wanted(started), gpus_wanted(running)) == (2, 0)


@pytest.mark.slow
def test_an_eval_against_a_running_server_records_the_seeds_it_sent(store):
    from backend.jobs import runner
    from backend.sweep.spec import EvalSpec, validate_spec
    from tests.rollout.openai_standin import StandIn

    server = StandIn("my-model").start()
    try:
        spec = validate_spec(EvalSpec, {"checkpoints": [str(LAB / "low")], "problems": PROBLEMS, "n": 3, "seed": 40,
                                        "engine": "openai", "server_url": server.url, "backend": "none",
                                        "max_tokens": 64})  # fmt: skip
        job = runner.create_job(store, spec)
        runner.run_job_here(store, job.id)
    finally:
        server.stop()
    samples = store.select(Sample, {"experiment_id": job.experiment_id})
    sent = sorted(body["seed"] for _, body in server.requests)
    recorded = sorted(t["seed"] for s in samples for t in s.transcript if t["role"] == "assistant")
    assert sent == recorded == list(range(40, 40 + len(PROBLEMS) * 3))  # one request, one seed, per sample
    assert all(check(path, body) for path, body in server.requests)
    assert store.get(Experiment, job.experiment_id).spec["server_url"] == server.url


@pytest.mark.slow
def test_a_rollout_samples_a_running_server(store):
    """`rollout --engine openai --server-url`: the rollout loop through the server, the seeds recorded."""
    from backend.rollout.run import run_rollout
    from backend.rollout.spec import RolloutSpec, SamplingSpec
    from tests.rollout.openai_standin import StandIn

    server = StandIn().start()
    try:
        spec = RolloutSpec(checkpoint=str(LAB / "low"), problems=PROBLEMS[:1], engine="openai", server_url=server.url,
                           backend="none", sampling=SamplingSpec(n=2, seed=5, max_tokens=64))  # fmt: skip
        exp = run_rollout(store, spec, progress=False)
    finally:
        server.stop()
    seeds = sorted(t["seed"] for s in store.select(Sample, {"experiment_id": exp}) for t in s.transcript if "seed" in t)
    assert seeds == [5, 6] and sorted(b["seed"] for _, b in server.requests) == [5, 6]
