"""Multi-turn logic against a scripted text source; every command really runs in the sandbox."""

import pytest

from backend.records import Problem, Sample, Test
from backend.rollout.run import RolloutSpec, run_rollout
from backend.rollout.settings import SettingLimits, run_episodes
from backend.rollout.spec import Completion, SamplingSpec


class ScriptedEngine:
    """Replies from a script: reply k of conversation c is script[c][k]; records each call."""

    def __init__(self, scripts):
        self.scripts = scripts
        self.calls = []

    def generate(self, conversations, spec, seeds=None):
        self.calls.append(len(conversations))
        out = []
        for conv in conversations:
            key = conv[1]["content"]
            turn = sum(1 for m in conv if m["role"] == "assistant")
            script = self.scripts[key]
            text = script[min(turn, len(script) - 1)]
            out.append([Completion(text, 10, len(text.split()), "stop", 0.01) for _ in range(spec.n)])
        return out


def conv(key):
    return [{"role": "system", "content": "sys"}, {"role": "user", "content": key}]


def tool(code):
    import json

    return "<tool_call>" + json.dumps({"name": "python", "arguments": {"code": code}}) + "</tool_call>"


LIMITS = SettingLimits(max_turns=4, command_time_s=1.0, output_chars=300)


def test_tool_use_runs_code_in_the_sandbox_and_batches_turns():
    engine = ScriptedEngine({
        "a": [tool("print(6 * 7)"), "Final:\n```python\nprint(42)\n```"],
        "b": [tool("while True:\n    pass"), tool("print('x' * 10000)"), "```python\nprint(1)\n```"],
        "c": ["<tool_call>{not json}</tool_call>", "```python\nprint(2)\n```"],
    })  # fmt: skip
    (a,), (b,), (c,) = run_episodes(engine, [conv("a"), conv("b"), conv("c")], "tool", SamplingSpec(n=1), LIMITS)
    assert engine.calls == [3, 3, 1]  # one engine call per turn for all live conversations
    assert [t.role for t in a.turns] == ["system", "user", "assistant", "tool", "assistant"]
    assert a.turns[3].tool_output.strip() == "42"
    assert "```python\nprint(42)" in a.final_text
    assert "[killed: over the 1s limit]" in b.turns[3].content
    assert "characters cut" in b.turns[5].content and len(b.turns[5].content) < 400
    assert "malformed tool call" in c.turns[3].content


def test_tool_use_stops_at_max_turns():
    engine = ScriptedEngine({"loop": [tool("print(1)")]})
    ((ep,),) = run_episodes(engine, [conv("loop")], "tool", SamplingSpec(n=1), LIMITS)
    assert sum(t.role == "assistant" for t in ep.turns) == 4
    assert ep.notes == ["stopped after max_turns=4"] and ep.finish_reason == "length"


def test_agentic_terminal_keeps_files_limits_commands_and_submits():
    engine = ScriptedEngine({
        "solve": [
            "<bash>printf 'print(int(input()) * 2)\\n' > sol.py</bash>",
            "<bash>echo 21 | python3 sol.py</bash>",
            "<bash>python3 -c \"import socket; socket.create_connection(('93.184.216.34', 80), timeout=1)\"</bash>",
            "<bash>while true; do :; done</bash>",
            "<submit>sol.py</submit>",
        ],
        "nosubmit": ["I give up."],
    })  # fmt: skip
    (ep,), (quit_,) = run_episodes(
        engine,
        [conv("solve"), conv("nosubmit")],
        "agentic",
        SamplingSpec(n=1),
        SettingLimits(max_turns=6, command_time_s=1.0),
    )
    outputs = [t.content for t in ep.turns if t.role == "tool"]
    assert outputs[0] == "[no output]"
    assert outputs[1].strip() == "42"  # the file written in turn 1 is still there
    assert "Network is unreachable" in outputs[2] or "exit code" in outputs[2]
    assert "[killed: over the 1s limit]" in outputs[3]
    assert ep.submitted_code == "print(int(input()) * 2)\n"
    assert ep.notes == ["submitted sol.py"]
    assert quit_.submitted_code is None


def test_rollout_stores_samples_with_transcripts_and_resumes(store, tmp_path):
    from backend.lab.tiny import make_tiny_checkpoint

    ckpt = make_tiny_checkpoint(tmp_path / "ckpt")
    store.put([Problem(id=f"t/p{i}", bench="t", title=f"P{i}", statement=f"key{i}") for i in range(3)])
    store.put(
        [
            Test(problem_id=f"t/p{i}", idx=0, input="1\n", output="2\n", input_len=2, tier=1, is_public=True)
            for i in range(3)
        ]
    )
    answers = {"a": "```python\nprint(2)\n```", "b": "no code here"}

    class ByProblem(ScriptedEngine):
        def generate(self, conversations, spec, seeds=None):
            self.calls.append(len(conversations))
            return [
                [Completion(answers["a" if "P0" in c[1]["content"] else "b"], 5, 3, "stop", 0.1)] * spec.n
                for c in conversations
            ]

    spec = RolloutSpec(checkpoint=str(ckpt), bench="t", sampling=SamplingSpec(n=2), limit=2)
    exp = run_rollout(store, spec, engine=ByProblem({}), progress=False)
    rows = store.select(Sample, {"experiment_id": exp})
    assert len(rows) == 4
    good = [r for r in rows if r.problem_id == "t/p0"]
    assert all(r.code == "print(2)\n" and r.extract_error is None for r in good)
    bad = [r for r in rows if r.problem_id == "t/p1"]
    assert all(r.code is None and r.extract_error == "no fenced code block in the answer" for r in bad)
    assert [t["role"] for t in good[0].transcript] == ["system", "user", "assistant"]
    again = ByProblem({})
    assert run_rollout(store, spec, engine=again, progress=False) == exp
    assert again.calls == [] and store.count(Sample) == 4  # resumed: nothing left to sample
    from backend.errors import UserError
    from backend.specs import cli_flag, validate_spec

    with pytest.raises(UserError, match=r"^--setting: choose one of 'reasoning', 'tool' or 'agentic'$"):
        validate_spec(RolloutSpec, {"checkpoint": str(ckpt), "setting": "chat"}, cli_flag)


@pytest.mark.parametrize("setting", ["reasoning", "tool", "agentic"])
def test_every_setting_end_to_end_with_the_tiny_model_and_the_sandbox(store, tmp_path, setting):
    """A real (random-weight) model in every setting: its output is garbage, but every stage runs
    for real and each sample lands with its transcript and an extraction verdict."""
    from backend.lab.tiny import make_tiny_checkpoint

    ckpt = make_tiny_checkpoint(tmp_path / "ckpt")
    store.put([Problem(id="t/echo", bench="t", title="Echo", statement="Print the input.")])
    store.put([Test(problem_id="t/echo", idx=0, input="5\n", output="5\n", input_len=2, tier=1, is_public=True)])
    spec = RolloutSpec(checkpoint=str(ckpt), bench="t", setting=setting,
                       sampling=SamplingSpec(n=2, max_tokens=24, seed=3),
                       limits=SettingLimits(max_turns=2, command_time_s=1.0), engine="transformers")  # fmt: skip
    exp = run_rollout(store, spec, progress=False)
    rows = store.select(Sample, {"experiment_id": exp})
    assert len(rows) == 2 and {r.setting for r in rows} == {setting}
    for r in rows:
        assert r.transcript[0]["role"] == "system" and r.transcript[1]["role"] == "user"
        assert any(t["role"] == "assistant" for t in r.transcript)
        assert r.completion_tokens > 0 and r.finish_reason in ("stop", "length")
        assert (r.code is None) == (r.extract_error is not None)
