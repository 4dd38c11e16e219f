"""The vLLM path through a strict stand-in of vLLM 0.31.0's API (tests/rollout/vllm_standin.py):
the logic around the model, which is all that can run on a machine without a GPU."""

import inspect

import pytest
import torch
from transformers import AutoModelForCausalLM

from backend.errors import UserError
from backend.rollout.engines import make_engine
from backend.rollout.spec import SamplingSpec
from tests.rollout import vllm_standin
from tests.rollout.vllm_standin import EVENTS, LLM


def chat(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


def test_the_standin_refuses_what_vllm_refuses(vllm, bf16_pair):
    with pytest.raises(vllm_standin.VLLMValidationError, match="n must be 1 when using greedy sampling"):
        vllm.SamplingParams(n=4, temperature=0.0)
    with pytest.raises(TypeError):
        vllm.SamplingParams(num_samples=2)
    with pytest.raises(TypeError):
        vllm.LLM(bf16_pair[0], not_an_engine_arg=1)
    assert vllm_standin.signature_of(LLM, "collective_rpc") == ["self", "method", "timeout", "args", "kwargs"]
    assert vllm_standin.signature_of(LLM, "reset_prefix_cache") == ["self", "reset_running_requests", "reset_connector"]
    assert inspect.signature(LLM.chat).parameters["sampling_params"].default is None


def _digest(worker) -> int:
    return len(list(worker.model_runner.model.parameters()))


def test_collective_rpc_arguments_cross_as_msgpack(vllm, bf16_pair, monkeypatch):
    """vLLM sends collective_rpc to its engine process as msgpack: a function is refused with
    vLLM's TypeError unless VLLM_ALLOW_INSECURE_SERIALIZATION=1; a named method goes through."""
    llm = vllm.LLM(bf16_pair[0], worker_extension_cls="backend.merge.live_vllm.AlphaSwitchExtension")
    with pytest.raises(TypeError, match="is not serializableSet VLLM_ALLOW_INSECURE_SERIALIZATION=1 to allow"):
        llm.collective_rpc(_digest)
    digests = llm.collective_rpc("flab_weights_digest")[0]
    assert set(digests) == {n for n, _ in llm.worker.model_runner.model.named_parameters()}
    assert vllm_standin.over_the_wire(("a", 1.5, (2,))) == ["a", 1.5, [2]]  # tuples arrive as lists
    monkeypatch.setenv("VLLM_ALLOW_INSECURE_SERIALIZATION", "1")  # vLLM pickles it then
    assert llm.collective_rpc(_digest) == [len(digests)]


def test_each_conversation_gets_its_own_seed(vllm, bf16_pair):
    """The n copies of a conversation (tool and agentic settings) must not come out the same."""
    engine = make_engine("vllm", bf16_pair[0])
    same = [chat("solve it")] * 4
    out = engine.generate(same, SamplingSpec(n=1, temperature=0.7, seed=3, max_tokens=16))
    seeds = [e[1] for e in EVENTS if e[0] == "request"]
    assert len(seeds) == 4 and len(set(seeds)) == 4
    assert len({c[0].text for c in out}) == 4  # distinct seeds: distinct samples
    again = engine.generate(same, SamplingSpec(n=1, temperature=0.7, seed=3, max_tokens=16))
    assert [c[0].text for c in again] == [c[0].text for c in out]  # and reproducible


def test_greedy_with_n_above_one_is_one_request_copied(vllm, bf16_pair):
    engine = make_engine("vllm", bf16_pair[0])
    out = engine.generate([chat("a"), chat("b")], SamplingSpec(n=3, temperature=0.0, max_tokens=16))
    assert [e[2] for e in EVENTS if e[0] == "request"] == [1, 1]  # n=1 per request, as vLLM demands
    assert [len(c) for c in out] == [3, 3] and len({x.text for x in out[0]}) == 1


def test_a_prompt_longer_than_max_model_len_is_that_samples_format_failure(vllm, bf16_pair):
    from backend.rollout.extract import REASONS, extract_code

    engine = make_engine("vllm", bf16_pair[0], max_model_len=64)
    out = engine.generate([chat("short"), chat("long " * 200)], SamplingSpec(n=2, temperature=0.7, max_tokens=8))
    assert [c.finish_reason for c in out[1]] == ["prompt_too_long"] * 2
    assert out[0][0].finish_reason == "stop" and "print(0)" in out[0][0].text  # the batch went on
    assert extract_code(out[1][0].text, "python", out[1][0].finish_reason).error == REASONS["prompt_too_long"]


def _reference(low: str, high: str, alpha: float) -> dict[str, torch.Tensor]:
    """θ_α in float32 arithmetic on the checkpoints' tensors (torch alone), cast to bf16."""
    lo = AutoModelForCausalLM.from_pretrained(low, dtype=torch.bfloat16).state_dict()
    hi = AutoModelForCausalLM.from_pretrained(high, dtype=torch.bfloat16).state_dict()
    return {
        n: torch.add(torch.mul(lo[n].float(), 1 - alpha), hi[n].float(), alpha=alpha).to(torch.bfloat16) for n in lo
    }


def test_alpha_switch_feeds_load_weights_with_hf_names_into_fused_layers(vllm, bf16_pair):
    low, high = bf16_pair
    engine = make_engine("vllm", low, alpha_switch=(low, high))
    llm = LLM.instances[-1]
    assert llm.kwargs["worker_extension_cls"] == "backend.merge.live_vllm.AlphaSwitchExtension"
    assert llm.gpu_memory_utilization == 0.92  # tiny endpoints on a 140 GiB device: vLLM's default share
    switch = engine.alpha_switch(low, high)
    model = llm.worker.model_runner.model
    for alpha in (0.5, -0.5, 1.5):
        switch.set_alpha(alpha)
        want = _reference(low, high, alpha)
        for fused, spans in model.shards.items():  # q/k/v and gate/up land in their fused rows
            for hf_name, a, b in spans:
                assert torch.equal(model.param(fused)[a:b], want[hf_name]), (alpha, hf_name)
        plain = [n for n in model.names if n not in model.shards]
        assert plain and all(torch.equal(model.param(n), want[n]) for n in plain)
    assert [e for e in EVENTS if e[0] == "dtype_mismatch"] == []  # bf16 in, no per-tensor warnings
    assert sum(e[0] == "reset_prefix_cache" for e in EVENTS) == 3


def test_a_failed_prefix_cache_reset_stops_the_sweep(vllm, bf16_pair):
    low, high = bf16_pair
    switch = make_engine("vllm", low, alpha_switch=(low, high)).alpha_switch(low, high)
    LLM.reset_result = False
    with pytest.raises(RuntimeError, match="did not reset its prefix cache"):
        switch.set_alpha(0.5)


def test_an_engine_built_without_the_switch_refuses_one(vllm, bf16_pair):
    with pytest.raises(UserError, match="without the α switch"):
        make_engine("vllm", bf16_pair[0]).alpha_switch(*bf16_pair)


@pytest.mark.slow
def test_a_live_switch_sweep_through_jobs_with_engine_vllm(vllm, bf16_pair, tmp_path, monkeypatch):
    """The certain failure the review found: a live-switch sweep with vLLM, end to end in jobs."""
    from backend.jobs import runner
    from backend.problems.build import build_builtin
    from backend.records import Evaluation, Job, Sample
    from backend.store import Store
    from backend.sweep.spec import SweepSpec, validate_spec

    monkeypatch.setenv("FLAB_CACHE", str(tmp_path / "cache"))
    store = Store(tmp_path / "jobs.duckdb")
    build_builtin(store, only=["max-subarray"], progress=False)
    low, high = bf16_pair
    spec = validate_spec(SweepSpec, {"low": low, "high": high, "alphas": "-0.5,0.5,1.5",
                                     "problems": ["builtin/max-subarray"],
                                     "n": 2, "max_tokens": 16, "engine": "vllm", "live_switch": True})  # fmt: skip
    job = runner.create_job(store, spec)
    runner.run_job_here(store, job.id)
    assert store.get(Job, job.id).status == "done", store.get(Job, job.id).error
    assert len(LLM.instances) == 1  # one engine for the whole grid, switched in place
    rpcs = [e[1] for e in EVENTS if e[0] == "rpc"]
    assert rpcs.count("flab_load_endpoints") == 1 and rpcs.count("flab_set_alpha") == 3
    samples = store.select(Sample, {"experiment_id": job.experiment_id})
    assert len(samples) == 3 * 2 and len({s.completion for s in samples}) == 6  # weights and seeds differ
    assert store.count(Evaluation, {"experiment_id": job.experiment_id}) == 6
