import pytest

from backend.lab.tiny import make_tiny_checkpoint
from backend.rollout.engines import TransformersEngine, make_engine, render_plain
from backend.rollout.spec import SamplingSpec

CONVS = [
    [{"role": "user", "content": "add two numbers"}],
    [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}],
]


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    return TransformersEngine(str(make_tiny_checkpoint(tmp_path_factory.mktemp("tiny") / "ckpt")), batch_size=4)


def test_n_samples_token_counts_and_finish_reasons(engine):
    out = engine.generate(CONVS, SamplingSpec(n=3, max_tokens=12, seed=1))
    assert [len(cs) for cs in out] == [3, 3]
    for conv, comps in zip(CONVS, out, strict=True):
        prompt_len = len(engine.tokenizer(engine.render(conv))["input_ids"])
        for c in comps:
            assert c.prompt_tokens == prompt_len  # left padding not counted
            assert 0 <= c.completion_tokens <= 12
            assert (c.finish_reason == "length") == (c.completion_tokens == 12)


def test_same_seed_same_text_other_seed_other_text(engine):
    spec = SamplingSpec(n=2, max_tokens=16, seed=7)
    first = [c.text for cs in engine.generate(CONVS, spec) for c in cs]
    assert first == [c.text for cs in engine.generate(CONVS, spec) for c in cs]
    other = [c.text for cs in engine.generate(CONVS, SamplingSpec(n=2, max_tokens=16, seed=8)) for c in cs]
    assert other != first


def test_greedy_is_deterministic_and_batching_does_not_change_it(engine):
    spec = SamplingSpec(n=1, max_tokens=10, temperature=0.0)
    together = [cs[0].text for cs in engine.generate(CONVS, spec)]
    alone = [engine.generate([c], spec)[0][0].text for c in CONVS]
    assert together == alone


def test_stop_strings_end_the_turn(engine):
    out = engine.generate(CONVS[:1], SamplingSpec(n=4, max_tokens=40, seed=3, stop=("e",)))
    for c in out[0]:
        assert c.text.count("e") <= 1 and (c.text.endswith("e") or "e" not in c.text)


def test_plain_template_and_auto_engine(tmp_path):
    assert render_plain(CONVS[1]) == "<|system|>\nbe brief\n<|user|>\nhi\n<|assistant|>\n"
    folder = make_tiny_checkpoint(tmp_path / "t")
    assert isinstance(make_engine("auto", str(folder)), TransformersEngine)  # no CUDA/vllm here
