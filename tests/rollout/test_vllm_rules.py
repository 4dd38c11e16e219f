"""vLLM's rules through the stand-in (tests/rollout/vllm_standin.py): one engine's memory share per
device until it is shut down, a memory plan for the α switch, no seed shared within a run, and
plain prompts through LLM.generate for checkpoints without a chat template.

The first four are the contract tests of issue #25; each failed on the code before it."""

import math
from pathlib import Path

import pytest
import torch
from safetensors import safe_open

from backend.errors import UserError
from backend.lab.tiny import make_tiny_checkpoint
from backend.records import Evaluation, Experiment, Job, Sample
from backend.rollout.engines import make_engine
from backend.rollout.spec import SamplingSpec
from backend.store import Store
from tests.rollout import vllm_standin
from tests.rollout.vllm_standin import EVENTS, LLM


@pytest.fixture(scope="module")
def base_checkpoint(tmp_path_factory):
    """A tiny checkpoint without a chat template, as many base models ship."""
    folder = make_tiny_checkpoint(tmp_path_factory.mktemp("base") / "base", seed=3)
    (folder / "chat_template.jinja").unlink()
    return str(folder)


@pytest.fixture
def store(tmp_path, monkeypatch):
    from backend.problems.build import build_builtin

    monkeypatch.setenv("FLAB_CACHE", str(tmp_path / "cache"))
    store = Store(tmp_path / "rules.duckdb")
    build_builtin(store, only=SLUGS, progress=False)
    return store


SLUGS = ["max-subarray", "gcd-of-array", "balanced-brackets"]


def run_sweep(store, spec_fields):
    from backend.jobs import runner
    from backend.sweep.spec import SweepSpec, validate_spec

    job = runner.create_job(store, validate_spec(SweepSpec, spec_fields))
    runner.run_job_here(store, job.id)
    assert store.get(Job, job.id).status == "done", store.get(Job, job.id).error
    return job


def held_engines() -> int:
    return sum(1 for holder in vllm_standin.DEVICE.held if holder.startswith("engine-"))


@pytest.mark.slow
def test_a_two_alpha_disk_sweep_with_engine_vllm_runs_through_one_device(vllm, bf16_pair, store):
    """Before: Engines.get built the second α's engine while the first held its 92 % share."""
    low, high = bf16_pair
    job = run_sweep(store, {"low": low, "high": high, "alphas": "0.25,0.75", "problems": ["builtin/max-subarray"],
                            "n": 2, "max_tokens": 16, "engine": "vllm"})  # fmt: skip
    starts = [e for e in EVENTS if e[0] == "start"]
    assert len(starts) == 2 and starts[0][2] != starts[1][2]  # two merged folders, one after the other
    first_shutdown = EVENTS.index(("shutdown", starts[0][1]))
    assert first_shutdown < EVENTS.index(starts[1])  # the first engine gave its share back before the second
    assert held_engines() == 0  # the job's end closed the last one
    assert store.count(Evaluation, {"experiment_id": job.experiment_id}) == 2 * 2


@pytest.mark.slow
def test_a_live_sweep_with_an_independent_checkpoint_runs_through_one_device(vllm, bf16_pair, store, tmp_path):
    """Before: the independent checkpoint's engine could not start beside the switching one."""
    low, high = bf16_pair
    other = make_tiny_checkpoint(tmp_path / "independent", seed=9)
    job = run_sweep(store, {"low": low, "high": high, "alphas": "0,1", "problems": ["builtin/max-subarray"], "n": 2,
                            "max_tokens": 16, "engine": "vllm", "live_switch": True,
                            "independent": [str(other)]})  # fmt: skip
    starts = [e for e in EVENTS if e[0] == "start"]
    assert [s[2] for s in starts] == [low, str(other)]
    assert EVENTS.index(("shutdown", starts[0][1])) < EVENTS.index(starts[1])
    assert held_engines() == 0
    samples = store.select(Sample, {"experiment_id": job.experiment_id})
    assert len(samples) == 3 * 2


@pytest.mark.slow
def test_a_failed_job_closes_its_engine(vllm, bf16_pair, store):
    from backend.jobs import runner
    from backend.sweep.spec import SweepSpec, validate_spec

    low, high = bf16_pair
    LLM.reset_result = False  # the first switch fails after the engine was built
    spec = validate_spec(SweepSpec, {"low": low, "high": high, "alphas": "0,1", "problems": ["builtin/max-subarray"],
                                     "n": 1, "max_tokens": 8, "engine": "vllm", "live_switch": True})  # fmt: skip
    job = runner.create_job(store, spec)
    with pytest.raises(RuntimeError, match="did not reset its prefix cache"):
        runner.run_job_here(store, job.id)
    assert store.get(Job, job.id).status == "failed"
    assert [e[0] for e in EVENTS if e[0] in ("start", "shutdown")] == ["start", "shutdown"] and held_engines() == 0


@pytest.mark.slow
def test_a_rollout_with_n_4_over_several_problems_reuses_no_seed(vllm, bf16_pair, store, monkeypatch):
    """Before: conversation i got one seed and its children seed + k, so sample k of problem i drew
    the noise of sample 0 of problem i + k; and every batch started again from the same seeds."""
    from backend.rollout import run

    monkeypatch.setattr(run, "PROBLEMS_PER_BATCH", 2)  # three problems: two batches
    spec = run.RolloutSpec(checkpoint=bf16_pair[0], problems=[f"builtin/{s}" for s in SLUGS], engine="vllm",
                           sampling=SamplingSpec(n=4, temperature=0.7, seed=11, max_tokens=16))  # fmt: skip
    exp = run.run_rollout(store, spec, progress=False)
    drawn = [(e[1], e[2]) for e in EVENTS if e[0] == "sample"]
    assert sorted(seed for seed, _ in drawn) == list(range(11, 11 + 3 * 4))  # S + i·n + k, each once
    samples = store.select(Sample, {"experiment_id": exp})
    noises = [s.completion.split("noise=")[1].split()[0] for s in samples]
    assert len(samples) == 12 and len(set(noises)) == 12  # no two samples share sampling noise


def test_a_tool_rollout_derives_distinct_seeds_per_conversation_sample_and_turn(vllm, bf16_pair):
    from backend.rollout.settings import SettingLimits, run_episodes

    engine = make_engine("vllm", bf16_pair[0])
    convs = [[{"role": "system", "content": "s"}, {"role": "user", "content": t}] for t in ("a", "b")]
    engine_generate = engine.generate

    def answers_with_a_tool_call_first(prompts, spec, seeds=None):  # the stand-in model never calls a tool
        out = engine_generate(prompts, spec, seeds)
        if not any(e[0] == "turn" for e in EVENTS):
            EVENTS.append(("turn",))
            for c in out:
                c[0].text = '<tool_call>{"name": "python", "arguments": {"code": "print(1)"}}</tool_call>'
        return out

    engine.generate = answers_with_a_tool_call_first
    run_episodes(engine, convs, "tool", SamplingSpec(n=3, temperature=0.7, seed=5, max_tokens=8),
                 SettingLimits(max_turns=2), backend="none")  # fmt: skip
    seeds = [e[1] for e in EVENTS if e[0] == "sample"]
    turn0 = [5 + i * 3 + k for i in range(2) for k in range(3)]
    assert seeds == turn0 + [s + 2**32 for s in turn0]  # (conversation, sample, turn): twelve distinct seeds


def _bytes_and_largest(folder: str) -> tuple[int, int]:
    with safe_open(str(Path(folder) / "model.safetensors"), "pt") as f:
        tensors = [f.get_tensor(k) for k in f.keys()]  # noqa: SIM118
    return sum(t.numel() * t.element_size() for t in tensors), max(t.numel() for t in tensors)


def test_the_memory_plan_refuses_a_model_too_big_for_the_device(monkeypatch, bf16_pair):
    """Before: the switch always asked vLLM for 80 % and hoped the endpoints fit in the rest."""
    low, high = bf16_pair
    size, largest = _bytes_and_largest(low)
    vllm_standin.install(monkeypatch, device_bytes=3 * size)  # both endpoints leave too little to serve one copy
    with pytest.raises(UserError) as refused:
        make_engine("vllm", low, alpha_switch=(low, high))
    line = str(refused.value)
    assert "\n" not in line and "GiB device" in line and "parameters" in line
    assert "bf16 endpoints" in line and "host-pinned" in line and "disk sweep" in line
    assert not LLM.instances  # refused before any engine started

    total = 10 * size  # a device that fits: utilization leaves both endpoints, scratch and 2 % beside vLLM
    vllm_standin.install(monkeypatch, device_bytes=total)
    make_engine("vllm", low, alpha_switch=(low, high))
    beside = 2 * size + largest * (8 + 2) + int(0.02 * total)
    assert LLM.instances[-1].gpu_memory_utilization == math.floor(100 * (total - beside) / total) / 100
    assert vllm_standin.DEVICE.held["engine-" + str(LLM.built)] == math.ceil(
        total * LLM.instances[-1].gpu_memory_utilization
    )  # fmt: skip


def test_host_pinned_endpoints_leave_the_device_to_vllm(monkeypatch, bf16_pair):
    low, high = bf16_pair
    size, _ = _bytes_and_largest(low)
    vllm_standin.install(monkeypatch, device_bytes=int(6.5 * size))
    with pytest.raises(UserError, match="does not fit a live α switch"):
        make_engine("vllm", low, alpha_switch=(low, high))  # both endpoints on the device leave too little
    engine = make_engine("vllm", low, alpha_switch=(low, high), switch_endpoints="host")
    engine.alpha_switch(low, high).set_alpha(0.5)
    holder = "engine-" + str(LLM.built)
    assert vllm_standin.DEVICE.held[holder] == math.ceil(int(6.5 * size) * LLM.instances[-1].gpu_memory_utilization)
    engine.close()
    assert holder not in vllm_standin.DEVICE.held and ("empty_cache",) in EVENTS


def test_a_sweep_too_big_for_the_device_is_refused_by_the_job_on_its_device(monkeypatch, bf16_pair, store):
    """The memory plan runs in the job, when its turn comes, on the device it was given; creating
    the job (the CLI's or the dashboard's process) never asks a device, so a job queued behind
    another is not judged by what is free now, and the dashboard opens no CUDA context."""
    from backend.jobs import runner
    from backend.sweep.spec import SweepSpec, validate_spec

    low, high = bf16_pair
    vllm_standin.install(monkeypatch, device_bytes=3 * _bytes_and_largest(low)[0])
    spec = validate_spec(SweepSpec, {"low": low, "high": high, "alphas": "0,1", "engine": "vllm", "live_switch": True})
    ledger, asked = torch.cuda.mem_get_info, []
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: asked.append(device) or ledger(device))
    job = runner.create_job(store, spec)
    assert asked == [] and store.get(Job, job.id).status == "queued"
    monkeypatch.setattr(torch.cuda, "mem_get_info", ledger)
    with pytest.raises(UserError, match="does not fit a live α switch"):
        runner.run_job_here(store, job.id)
    assert store.get(Job, job.id).status == "failed" and "does not fit a live α switch" in store.get(Job, job.id).error


def test_an_engine_is_held_until_shut_down_or_collected(vllm, bf16_pair):
    import gc

    LLM(bf16_pair[0])
    with pytest.raises(ValueError, match="less than desired GPU memory utilization"):
        LLM(bf16_pair[1])  # the first still holds its 92 %
    LLM.instances.clear()
    gc.collect()  # the engine core's finalizer gives the share back
    assert vllm_standin.DEVICE.free == vllm_standin.DEVICE.total
    make_engine("vllm", bf16_pair[1]).close()
    assert vllm_standin.DEVICE.free == vllm_standin.DEVICE.total


def test_temperature_follows_vllms_rule_in_both_engines(vllm, bf16_pair):
    """vLLM raises 0 < T < 0.01 to 0.01 before its greedy test (T < 1e-5), so only T = 0 is greedy.
    Before: T = 5e-6 was one greedy request copied n times, where vLLM samples n at T = 0.01."""
    params = vllm.SamplingParams(n=3, temperature=5e-6)
    assert params.temperature == 0.01 and not params.greedy  # vLLM's clamp: sampled, and n = 3 allowed
    for t in (5e-6, 0.005):
        with pytest.raises(UserError, match=f"temperature {t:g} is below vLLM's floor of 0.01"):
            SamplingSpec(n=3, temperature=t)
    engine = make_engine("vllm", bf16_pair[0])
    out = engine.generate([[{"role": "user", "content": "a"}]], SamplingSpec(n=3, temperature=0.0, max_tokens=8))
    assert [e[2] for e in EVENTS if e[0] == "request"] == [1]  # greedy: one request, copied (vLLM refuses n=3)
    assert len({c.text for c in out[0]}) == 1 and "noise=greedy" in out[0][0].text
    engine.generate([[{"role": "user", "content": "a"}]], SamplingSpec(n=3, temperature=0.01, max_tokens=8))
    assert [e for e in EVENTS if e[0] == "temperature_raised"] == [("temperature_raised", 5e-6)]  # the first only


def test_the_plan_checks_the_kv_cache_for_max_model_len_as_vllm_does(monkeypatch, bf16_pair):
    """Before: a share of 1.25 × the weights passed the plan and vLLM failed at start-up with its own
    message. The tiny model's KV cache for one 2048-token sequence: 2 layers × 2048 tokens × 2 KV
    heads × (K + V) × 16 dims × 2 bytes."""
    from backend.merge.live_vllm import kv_cache_bytes

    low, high = bf16_pair
    assert kv_cache_bytes(low) == (2 * 2048 * 2 * 2 * 16 * 2, 2048)
    assert kv_cache_bytes(low, 100)[0] == 2 * 112 * 2 * 2 * 16 * 2  # whole blocks of 16 tokens
    size, _ = _bytes_and_largest(low)
    vllm_standin.install(monkeypatch, device_bytes=4 * size)  # host endpoints leave a share ≥ 1.25 × weights
    with pytest.raises(UserError) as refused:
        make_engine("vllm", low, alpha_switch=(low, high), switch_endpoints="host")
    line = str(refused.value)
    assert "\n" not in line and "KV cache for one 2048-token sequence 0.00" in line and not LLM.instances
    with pytest.raises(ValueError, match=r"To serve at least one request with the model's max seq len \(2048\)"):
        LLM(low, gpu_memory_utilization=0.9)  # what vLLM itself says at the same share
    make_engine("vllm", low, alpha_switch=(low, high), switch_endpoints="host", max_model_len=256).close()


def test_the_next_engine_waits_until_the_closed_ones_memory_is_back(monkeypatch, bf16_pair):
    """A multiprocess engine's memory comes back after shutdown returns. Before: the next engine
    started at once and vLLM refused it ("less than desired GPU memory utilization")."""
    from backend.rollout import vllm_engine

    vllm_standin.install(monkeypatch, lag=5)
    monkeypatch.setattr(vllm_engine, "POLL_S", 0.01)
    make_engine("vllm", bf16_pair[0]).close()
    assert vllm_standin.DEVICE.free < vllm_standin.DEVICE.total  # not back yet
    polls = vllm_standin.DEVICE.polls
    make_engine("vllm", bf16_pair[1]).close()
    assert vllm_standin.DEVICE.polls - polls >= 4 and held_engines() == 0
    monkeypatch.setattr(vllm_engine, "RELEASE_WAIT_S", 0.0)  # no wait: vLLM's own refusal, as before
    with pytest.raises(ValueError, match="less than desired GPU memory utilization"):
        make_engine("vllm", bf16_pair[0])


def test_chat_on_a_checkpoint_without_a_template_is_refused_in_one_line(vllm, base_checkpoint):
    from backend.rollout.prompts import resolve_prompt_format

    with pytest.raises(UserError, match=r"has no chat template.*--prompt-format plain"):
        resolve_prompt_format("chat", [base_checkpoint])
    assert resolve_prompt_format("auto", [base_checkpoint]) == "plain"
    with pytest.raises(vllm_standin.ChatTemplateResolutionError):  # what vLLM itself would do
        LLM(base_checkpoint).chat([{"role": "user", "content": "x"}])


@pytest.mark.slow
def test_a_rollout_on_a_base_checkpoint_uses_plain_prompts_through_generate(vllm, base_checkpoint, store):
    from backend.records import Problem
    from backend.rollout import run
    from backend.rollout.prompts import SYSTEM, problem_prompt
    from backend.rollout.run import public_example

    spec = run.RolloutSpec(checkpoint=base_checkpoint, problems=["builtin/max-subarray"], engine="vllm",
                           sampling=SamplingSpec(n=2, temperature=0.7, max_tokens=16))  # fmt: skip
    exp = run.run_rollout(store, spec, progress=False)
    assert {e[1] for e in EVENTS if e[0] == "call"} == {"generate"}
    assert store.get(Experiment, exp).spec["prompt_format"] == "plain"  # the format used, stored
    (request,) = [e for e in EVENTS if e[0] == "request"]
    assert request[2] == 2
    samples = store.select(Sample, {"experiment_id": exp})
    assert sorted(s.code for s in samples) == ["print(0)\n", "print(1)\n"]
    # the prompt the model saw: problem, instructions, answer cue, as the plain template documents
    problem = store.get(Problem, "builtin/max-subarray")
    (prompt,) = [e[1] for e in EVENTS if e[0] == "prompt"]
    stated = problem_prompt(problem, public_example(store, problem))
    assert prompt == stated + "\n\n" + SYSTEM["reasoning"] + "\n\nSolution:\n"


@pytest.mark.slow
def test_a_sweep_on_base_checkpoints_stores_plain_and_generates(vllm, base_checkpoint, store, tmp_path):
    high = make_tiny_checkpoint(tmp_path / "high", seed=4)
    (high / "chat_template.jinja").unlink()
    job = run_sweep(store, {"low": base_checkpoint, "high": str(high), "alphas": "0,1", "n": 2, "max_tokens": 16,
                            "problems": ["builtin/max-subarray"], "engine": "vllm", "live_switch": True})  # fmt: skip
    assert store.get(Experiment, job.experiment_id).spec["prompt_format"] == "plain"
    assert {e[1] for e in EVENTS if e[0] == "call"} == {"generate"}
    assert store.count(Evaluation, {"experiment_id": job.experiment_id}) == 4


def test_chat_format_for_a_sweep_with_a_base_checkpoint_is_refused_before_the_job(
    vllm, base_checkpoint, store, tmp_path
):
    from backend.jobs import runner
    from backend.sweep.spec import SweepSpec, validate_spec

    high = make_tiny_checkpoint(tmp_path / "high", seed=4)
    (high / "chat_template.jinja").unlink()  # the same tokenizer as the base (a template would be refused)
    spec = validate_spec(
        SweepSpec, {"low": base_checkpoint, "high": str(high), "alphas": "0,1", "prompt_format": "chat"}
    )
    with pytest.raises(UserError, match=f"checkpoint {base_checkpoint} has no chat template"):
        runner.create_job(store, spec)
    assert store.count(Job, {}) == 0
