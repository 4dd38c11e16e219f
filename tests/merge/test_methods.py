"""The merge-method registry: each method against an independent torch reference on real
checkpoints, the engine and both α switches bit for bit equal per method, and a third method added
as a module file, with no change to the engine or the switches."""

import hashlib
import importlib.util
import json
import textwrap

import pytest
import torch
from transformers import AutoModelForCausalLM

from backend.errors import UserError
from backend.merge import methods
from backend.merge.cache import merge_key
from backend.merge.engine import merge
from backend.merge.live import LiveAlphaSwitch, blended, load_endpoints
from backend.merge.spec import Merge, from_mergekit_yaml, to_mergekit_yaml
from tests.merge.conftest import make_checkpoint
from tests.merge.test_merge import reference as linear_reference
from tests.merge.test_merge import tensors

ALPHAS = [-0.5, 0.0, 0.5, 1.0, 1.5]


def task_arithmetic_reference(base: dict, others: list[dict], lambdas: list[float]) -> dict:
    """θ_base + Σ λ_i·(θ_i − θ_base), task vector by task vector, in torch's float32 arithmetic."""
    out = {}
    for name, b in base.items():
        acc = b.float()
        for other, lam in zip(others, lambdas, strict=True):
            if lam != 0:
                acc = torch.add(acc, other[name].float() - b.float(), alpha=lam)
        out[name] = acc.to(b.dtype)
    return out


REFERENCES = {
    "linear": linear_reference,
    "task_arithmetic": lambda low, high, alpha: task_arithmetic_reference(low, [high], [alpha]),
}


def assert_same(got: dict, want: dict, what) -> None:
    assert got.keys() == want.keys()
    for name in want:
        assert got[name].dtype == want[name].dtype, (what, name)
        assert torch.equal(got[name], want[name]), (what, name)


def test_registry_holds_the_files_of_the_package_and_specs_refuse_other_names(pair):
    assert methods.names() == ("linear", "task_arithmetic")
    low, high = pair()
    with pytest.raises(UserError, match="unknown merge method 'slerp'; choose one of linear, task_arithmetic"):
        Merge([str(low), str(high)], [0.5, 0.5], "slerp")
    with pytest.raises(UserError, match="unknown merge method"):
        LiveAlphaSwitch(AutoModelForCausalLM.from_pretrained(low), low, high, method="slerp")
    with pytest.raises(UserError, match="base, whose weight must be 0"):
        Merge([str(low), str(high)], [0.5, 0.5], "task_arithmetic")


@pytest.mark.parametrize("method", ["linear", "task_arithmetic"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=["bf16", "f32"])
def test_each_method_against_torch_and_live_switches_bit_equal(pair, tmp_path, method, dtype):
    low, high = pair(sharded=True, dtype=dtype)
    lo, hi = tensors(low), tensors(high)
    model = AutoModelForCausalLM.from_pretrained(low, torch_dtype=dtype)
    switch = LiveAlphaSwitch(model, low, high, method=method)
    endpoints = load_endpoints(low, high)
    for alpha in ALPHAS:
        out = merge(Merge.at_alpha(low, high, alpha, method), tmp_path / f"{alpha}", progress=False).out
        got = tensors(out)
        assert_same(got, REFERENCES[method](lo, hi, alpha), (method, alpha))
        assert json.loads((out / "merge.json").read_text())["spec"]["method"] == method
        switch.set_alpha(alpha)  # transformers, CPU
        live = model.state_dict()
        assert all(torch.equal(live[n], got[n]) for n in got), (method, alpha)
        # what the vLLM worker extension feeds load_weights (each tensor valid until the next is yielded)
        vllm_feed = {n: t.clone() for n, t in blended(endpoints, alpha, method)}
        assert_same(vllm_feed, got, (method, alpha))


def test_task_vector_form_is_task_arithmetic(tmp_path):
    base = make_checkpoint(tmp_path / "base", seed=0)
    a, b = make_checkpoint(tmp_path / "a", seed=1), make_checkpoint(tmp_path / "b", seed=2)
    spec = Merge.task_vectors(base, [a, b], [0.7, 0.6])
    assert (spec.method, spec.weights) == ("task_arithmetic", [0.0, 0.7, 0.6])
    got = tensors(merge(spec, tmp_path / "tv", progress=False).out)
    assert_same(got, task_arithmetic_reference(tensors(base), [tensors(a), tensors(b)], [0.7, 0.6]), "tv")
    text = to_mergekit_yaml(spec)
    assert "merge_method: task_arithmetic" in text and f"base_model: {base}" in text
    back = from_mergekit_yaml(text)
    assert (back.models, back.weights, back.method) == (spec.models, spec.weights, "task_arithmetic")
    with pytest.raises(UserError, match="mergekit method 'slerp' has no equivalent"):
        from_mergekit_yaml(text.replace("task_arithmetic", "slerp"))


def test_merge_key_names_the_method_and_keeps_linear_keys(pair):
    low, high = (str(p) for p in pair())
    hashes = ["a" * 64, "b" * 64]
    with pytest.warns(UserWarning, match="sum to 0.5"):
        linear = Merge([low, high], [0.0, 0.5])
    before_methods = {"inputs": hashes, "weights": [0.0, 0.5], "dtype": "auto"}  # the key's payload until now
    assert merge_key(hashes, linear) == hashlib.sha256(json.dumps(before_methods, sort_keys=True).encode()).hexdigest()
    assert merge_key(hashes, Merge([low, high], [0.0, 0.5], "task_arithmetic")) != merge_key(hashes, linear)


CLAMPED = '''
    """A method written outside the package: θ_low + α·clamp(θ_high − θ_low, −0.1, 0.1)."""
    from backend.merge.methods import MergeMethod, register


    class ClampedStep(MergeMethod):
        name = "clamped_step"
        formula = "θ_low + α·clamp(θ_high − θ_low, −c, c)"

        def alpha_weights(self, alpha):
            return [0.0, alpha]

        def combine_into(self, acc, inputs, weights, tmp):
            low, high = inputs
            tmp.copy_(high).sub_(low).clamp_(-0.1, 0.1)
            return acc.copy_(low).add_(tmp, alpha=weights[1])


    register(ClampedStep())
'''


@pytest.fixture
def clamped_method(tmp_path):
    path = tmp_path / "clamped_step.py"
    path.write_text(textwrap.dedent(CLAMPED))
    module_spec = importlib.util.spec_from_file_location("clamped_step", path)
    module_spec.loader.exec_module(importlib.util.module_from_spec(module_spec))
    yield "clamped_step"
    methods.METHODS.pop("clamped_step")


def test_a_third_method_is_a_module(pair, tmp_path, clamped_method):
    low, high = pair()
    lo, hi = tensors(low), tensors(high)
    model = AutoModelForCausalLM.from_pretrained(low)
    switch = LiveAlphaSwitch(model, low, high, method=clamped_method)
    for alpha in (-0.5, 1.5):
        got = tensors(
            merge(Merge.at_alpha(low, high, alpha, clamped_method), tmp_path / f"{alpha}", progress=False).out
        )
        want = {n: torch.add(lo[n].float(), (hi[n].float() - lo[n].float()).clamp(-0.1, 0.1), alpha=alpha)
                .to(lo[n].dtype) for n in lo}  # fmt: skip
        assert_same(got, want, alpha)
        assert any(not torch.equal(got[n], linear_reference(lo, hi, alpha)[n]) for n in got)  # not the linear merge
        switch.set_alpha(alpha)
        assert all(torch.equal(model.state_dict()[n], got[n]) for n in got), alpha


@pytest.mark.slow
def test_the_cli_merges_by_any_registered_method_and_refuses_contradictions(pair, tmp_path):
    from tests.conftest import run_cli

    low, high = pair()
    for name, reference in REFERENCES.items():
        out = tmp_path / name
        res = run_cli(
            "merge", "--low", str(low), "--high", str(high), "--alpha", "1.5", "--method", name, "--out", str(out)
        )
        assert res.returncode == 0, res.stderr
        assert_same(tensors(out), reference(tensors(low), tensors(high), 1.5), name)
    task = run_cli("merge", "--model", f"{low}:0", "--model", f"{high}:-0.5", "--method", "task_arithmetic",
                   "--out", str(tmp_path / "tv"))  # fmt: skip
    assert task.returncode == 0, task.stderr
    assert_same(tensors(tmp_path / "tv"), task_arithmetic_reference(tensors(low), [tensors(high)], [-0.5]), "general")
    for args, message in (
        (["--model", f"{high}:1", "--base", str(low), "--method", "linear"], "--base makes task vectors"),
        (["--mergekit", str(tmp_path / "m.yml"), "--method", "linear"], "names its method itself"),
        (["--low", str(low), "--high", str(high), "--alpha", "1", "--method", "slerp"], "slerp"),
    ):
        res = run_cli("merge", *args, "--out", str(tmp_path / "no"))
        assert res.returncode == 2 and message in res.stderr, res.stderr
        assert not (tmp_path / "no").exists()
