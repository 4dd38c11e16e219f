"""The `openai` engine against the strict stand-in of vLLM 0.31.0's OpenAI server: its requests pass
vLLM's field rules, each sample carries the seed of the run's seed rule, failures are retried, and
responses become the text the model wrote. The stand-in refuses what vLLM refuses (first test)."""

import pytest

from backend.errors import UserError
from backend.rollout.extract import REASONS, extract_code
from backend.rollout.openai_engine import OpenAIEngine, with_stop
from backend.rollout.prompts import render
from backend.rollout.server_options import ServerOptions
from backend.rollout.settings import run_episodes
from backend.rollout.spec import SamplingSpec, SettingLimits, seed_of
from tests.conftest import ROOT
from tests.rollout.openai_rules import Refused, check
from tests.rollout.openai_standin import StandIn, noise

LAB_LOW = str(ROOT / "artifacts" / "lab" / "checkpoints" / "low")
MESSAGES = [{"role": "system", "content": "Solve it."}, {"role": "user", "content": "Add two numbers."}]
GOOD_CHAT = {
    "model": "m",
    "messages": MESSAGES,
    "temperature": 0.7,
    "top_p": 1.0,
    "seed": 3,
    "max_completion_tokens": 8,
}
GOOD_PLAIN = {"model": "m", "prompt": "Solution:\n", "temperature": 0.7, "top_p": 0.9, "seed": 3, "max_tokens": 8}

# (path, the change to a good request, whether vLLM 0.31.0 accepts it): each refusal is one of
# the rules tests/rollout/openai_rules.py cites, each acceptance a lax reading vLLM's pydantic makes
CASES = [
    ("/v1/chat/completions", {"seed": 2**63}, False),  # int64 (chat_completion/protocol.py:231)
    ("/v1/completions", {"seed": -(2**63) - 1}, False),
    ("/v1/completions", {"seed": "abc"}, False),
    ("/v1/completions", {"seed": "5"}, True),  # a numeric string is an int to lax pydantic
    ("/v1/chat/completions", {"seed": 1.5}, False),
    ("/v1/completions", {"logprobs": "x"}, False),  # completions: an int (completion/protocol.py:60)
    ("/v1/completions", {"logprobs": -2}, False),  # :529-532
    ("/v1/chat/completions", {"logprobs": "maybe"}, False),  # chat: a bool (chat_completion/protocol.py:220)
    ("/v1/chat/completions", {"top_logprobs": 2}, False),  # needs logprobs=true (:831-835)
    ("/v1/chat/completions", {"top_logprobs": 2, "logprobs": True}, True),
    ("/v1/chat/completions", {"n": 0}, False),  # sampling_params.py:40
    ("/v1/completions", {"n": "two"}, False),
    ("/v1/chat/completions", {"n": 2, "temperature": 0}, False),  # greedy refuses n > 1 (:703-707)
    ("/v1/completions", {"max_tokens": 0}, False),  # :625-629
    ("/v1/chat/completions", {"max_completion_tokens": 0}, False),
    ("/v1/completions", {"temperature": 2.5}, False),  # :602-606
    ("/v1/chat/completions", {"top_p": 0}, False),  # :608-612
    ("/v1/completions", {"stop": ["a", "b", "c", "d", "e"]}, False),  # VLLM_MAX_STOP_STRINGS = 4
    ("/v1/completions", {"stop": [""]}, False),  # :667-668
    ("/v1/completions", {"prompt": None}, False),
    ("/v1/chat/completions", {"messages": [{"content": "no role"}]}, False),
    (
        "/v1/chat/completions",
        {"generation_config": "{}"},
        True,
    ),  # extra fields are ignored (serve/engine/protocol.py:39)
]


@pytest.mark.parametrize(("path", "change", "accepted"), CASES)
def test_the_stand_in_refuses_what_vllm_refuses(path, change, accepted):
    body = {**(GOOD_CHAT if "chat" in path else GOOD_PLAIN), **change}
    if accepted:
        check(path, body)
    else:
        with pytest.raises(Refused):
            check(path, body)


@pytest.fixture
def standin():
    server = StandIn().start()
    yield server
    server.stop()


def engine_for(server, **options) -> OpenAIEngine:
    return OpenAIEngine("stand-in", ServerOptions(server_url=server.url + "/v1/", **options))


def test_requests_pass_vllm_rules_and_carry_each_samples_seed(standin):
    """Chat prompts go to chat completions with max_completion_tokens, plain ones to completions
    with max_tokens; one request per sample, sample k of prompt i carrying S + i·n + k."""
    engine = engine_for(standin, concurrency=3)
    spec = SamplingSpec(n=3, temperature=0.7, top_p=0.95, max_tokens=64, seed=11)
    out = engine.generate([MESSAGES, render(MESSAGES, "reasoning", "plain")], spec)
    assert [c.seed for c in out[0]] == [11, 12, 13] and [c.seed for c in out[1]] == [14, 15, 16]
    assert [seed_of(11, i, 3, k) for i in range(2) for k in range(3)] == list(range(11, 17))
    sent = {(path, body["seed"]): body for path, body in standin.requests}
    assert sorted(sent) == [("/v1/chat/completions", s) for s in (11, 12, 13)] + [
        ("/v1/completions", s) for s in (14, 15, 16)
    ]
    for path, body in standin.requests:
        check(path, body)  # as vLLM reads it
        assert "n" not in body and "logprobs" not in body
        assert body["temperature"] == 0.7 and body["top_p"] == 0.95 and type(body["seed"]) is int
    chat, plain = sent[("/v1/chat/completions", 11)], sent[("/v1/completions", 14)]
    assert chat["max_completion_tokens"] == 64 and "max_tokens" not in chat and chat["messages"] == MESSAGES
    assert plain["max_tokens"] == 64 and plain["prompt"].endswith("Solution:\n")
    assert [c.text.split()[0] for c in out[0]] == [f"noise={noise(s)}" for s in (11, 12, 13)]
    assert out[0][0].completion_tokens == len(out[0][0].text.split()) and out[0][0].prompt_tokens > 0
    assert {c.finish_reason for cs in out for c in cs} == {"stop"}


def test_greedy_decoding_is_one_request_copied(standin):
    out = engine_for(standin).generate([MESSAGES], SamplingSpec(n=4, temperature=0, seed=5))
    assert len(standin.requests) == 1 and len(out[0]) == 4 and len({c.text for c in out[0]}) == 1


def test_429_500_and_a_dropped_connection_are_retried(standin):
    standin.faults = ["429", "500", "drop"]
    (c,), = engine_for(standin).generate([MESSAGES], SamplingSpec(n=1, seed=2, max_tokens=64))  # fmt: skip
    assert len(standin.requests) == 4 and c.seed == 2 and "print(" in c.text
    assert [body["seed"] for _, body in standin.requests] == [2, 2, 2, 2]  # every try carries the sample's seed


def test_a_refused_request_fails_in_one_line_naming_the_servers_reason(standin):
    engine = engine_for(standin, extra_body='{"top_k": "many"}')
    with pytest.raises(UserError, match=r"refused a request \(400\): top_k: .*integer") as err:
        engine.generate([MESSAGES], SamplingSpec(n=1))
    assert "\n" not in str(err.value)


def test_extra_body_may_not_set_the_jobs_own_fields(standin):
    with pytest.raises(UserError, match="extra_body sets 'seed'"):
        engine_for(standin, extra_body='{"seed": 1}')


def test_a_prompt_past_the_context_is_that_samples_format_failure():
    server = StandIn(max_model_len=20).start()
    try:
        (c,), = engine_for(server).generate([MESSAGES], SamplingSpec(n=1, max_tokens=64))  # fmt: skip
    finally:
        server.stop()
    assert (c.finish_reason, c.text, c.completion_tokens) == ("context_too_long", "", 0)
    assert extract_code(c.text, "python", c.finish_reason).error == REASONS["context_too_long"]


def test_a_missing_server_and_a_missing_key_are_refused_in_one_line(standin, monkeypatch):
    with pytest.raises(UserError, match="no OpenAI-compatible server answers"):
        OpenAIEngine("m", ServerOptions(server_url="http://127.0.0.1:9"))
    monkeypatch.delenv("FLAB_TEST_KEY", raising=False)
    with pytest.raises(UserError, match="FLAB_TEST_KEY: that environment variable is not set"):
        engine_for(standin, api_key_env="FLAB_TEST_KEY")


@pytest.mark.parametrize("prompt_format", ["chat", "plain"])
def test_the_tool_setting_runs_its_turns_through_the_server(standin, prompt_format):
    """vLLM trims the stop string and names it in stop_reason: the engine puts it back, so the tool
    call is read, run in the sandbox, and its output sent back on the next turn."""
    spec = SamplingSpec(n=2, temperature=0.7, seed=100, max_tokens=64)
    (episodes,) = run_episodes(engine_for(standin), [MESSAGES], "tool", spec, SettingLimits(), "none", prompt_format)
    for k, ep in enumerate(episodes):
        roles = [t.role for t in ep.turns]
        assert roles == ["system", "user", "assistant", "tool", "assistant"]
        assert ep.turns[2].content.endswith("</tool_call>")  # put back from stop_reason
        assert ep.turns[3].content.strip() in {str(v) for v in range(5)}  # what print(v) printed in the sandbox
        assert [t.seed for t in ep.turns if t.role == "assistant"] == [seed_of(100, 0, 2, k, t) for t in (0, 1)]
        assert "```python" in ep.final_text
    first, second = [b for _, b in standin.requests[:2]], [b for _, b in standin.requests[2:]]
    assert all(b["stop"] == ["</tool_call>"] for b in first + second)
    assert all(check(p, b) for p, b in standin.requests)


def test_the_agentic_setting_runs_its_terminal_through_the_server(standin):
    """Two stop strings: the one vLLM trimmed comes back from stop_reason, so the command runs and the
    submitted file is the program."""
    spec = SamplingSpec(n=1, temperature=0.7, seed=3, max_tokens=64)
    ((ep,),) = run_episodes(engine_for(standin), [MESSAGES], "agentic", spec, SettingLimits(), "none", "chat")
    assert [t.role for t in ep.turns] == ["system", "user", "assistant", "tool", "assistant"]
    assert ep.turns[2].content.endswith("> s.py</bash>") and ep.turns[4].content.endswith("<submit>s.py</submit>")
    assert ep.submitted_code is not None and ep.submitted_code.startswith("print(")
    assert [b["stop"] for _, b in standin.requests] == [["</bash>", "</submit>"]] * 2


def test_stop_strings_are_kept_as_the_other_engines_keep_them():
    assert with_stop("a</bash> more", ("</bash>", "</submit>"), None) == "a</bash>"
    assert with_stop("run <bash>ls", ("</bash>", "</submit>"), "</bash>") == "run <bash>ls</bash>"
    assert with_stop("done", ("</bash>",), None) == "done"  # ended by EOS: nothing to put back
    assert with_stop("x", (), "</bash>") == "x"


def test_a_chat_message_becomes_the_text_the_model_wrote(standin):
    """Reasoning in front as <think>, parsed tool calls back in the Hermes form, and transformers
    serve's echo of the rendered prompt (the lab's chat template is not Qwen's) cut."""
    from transformers import AutoTokenizer

    engine = OpenAIEngine(LAB_LOW, ServerOptions(server_url=standin.url))
    rendered = AutoTokenizer.from_pretrained(LAB_LOW).apply_chat_template(
        MESSAGES, tokenize=False, add_generation_prompt=True
    )
    call = {"id": "c0", "type": "function", "function": {"name": "python", "arguments": '{"code": "print(2)"}'}}
    message = {"role": "assistant", "content": rendered + "Let me run it.", "tool_calls": [call], "reasoning": "hmm"}
    text = engine.message_text(message, MESSAGES)
    call_text = '<tool_call>\n{"name": "python", "arguments": {"code": "print(2)"}}\n</tool_call>'
    assert text == "<think>\nhmm\n</think>\n\nLet me run it." + call_text
    assert engine.message_text({"content": "plain answer"}, MESSAGES) == "plain answer"
