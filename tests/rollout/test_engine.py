import pytest

from backend.lab.tiny import make_tiny_checkpoint
from backend.records import Job
from backend.rollout.engines import TransformersEngine, make_engine
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


def test_auto_engine_and_one_prompt_format(tmp_path):
    folder = make_tiny_checkpoint(tmp_path / "t")
    engine = make_engine("auto", str(folder))
    assert isinstance(engine, TransformersEngine)  # no CUDA/vllm here
    assert engine.render(CONVS[1]) == engine.tokenizer.apply_chat_template(
        CONVS[1], tokenize=False, add_generation_prompt=True
    )


def test_chat_format_on_a_checkpoint_without_a_template_is_refused_before_any_job(tmp_path, store):
    from backend.errors import UserError
    from backend.jobs import runner
    from backend.records import Experiment
    from backend.rl.spec import RLSpec

    folder = make_tiny_checkpoint(tmp_path / "plain")
    (folder / "chat_template.jinja").unlink()
    spec = RLSpec(base=str(folder), output_dir=str(tmp_path / "out"), prompt_format="chat")
    with pytest.raises(UserError, match="has no chat template"):
        runner.create_job(store, spec)
    assert store.count(Job) == 0  # nothing was started or written
    job = runner.create_job(store, spec.model_copy(update={"prompt_format": "auto"}))  # auto: plain for it
    assert store.get(Experiment, job.experiment_id).spec["prompt_format"] == "plain"


def test_plain_prompts_reach_the_model_as_written(engine):
    from backend.rollout.prompts import render

    messages = [{"role": "system", "content": "Do it."}, {"role": "user", "content": "Problem."},
                {"role": "assistant", "content": "<bash>ls</bash>"}, {"role": "tool", "content": "a.py"}]  # fmt: skip
    plain = render(messages, "agentic", "plain")
    assert plain == "Problem.\n\nDo it.\n\nTerminal session:\n<bash>ls</bash>\n\nOutput:\na.py\n\n"
    assert engine.render(plain) == plain  # no template around it
    assert render(messages, "agentic", "chat") is messages
