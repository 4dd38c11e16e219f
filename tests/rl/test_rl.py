import pytest
import torch
from safetensors.torch import load_file

from backend.errors import UserError
from backend.records import Checkpoint, Metric, Problem, Test
from backend.rl.rewards import SandboxReward, parse_reward, repair_prompt
from backend.rl.trainer import RLSpec, run_rl
from backend.sandbox.judge import JudgeTest

# input lengths 4, 31, 301, 3001: tiers 1..4
TESTS = [JudgeTest("x" * n + "\n", "ok\n") for n in (3, 30, 300, 3000)]
PROBLEM = Problem(id="t/len", bench="t", title="Length", statement="-", time_limit_s=1.0)


def answer(code: str) -> list[dict]:
    return [{"role": "assistant", "content": f"```python\n{code}\n```"}]


@pytest.mark.parametrize(
    "reward,expected",
    [("R_1", [1, 1, 0, 0]), ("R_3", [1, 1, 0, 0]), ("R_4", [1, 0, 0, 0]), ("R_inf", [1, 0, 0, 0]),
     ("partial_continuous", [1.0, 0.75, 0.0, 0.0]), ("partial_discrete", [1.0, 0.75, 0.0, 0.0])],
)  # fmt: skip
def test_reward_values_from_the_real_judge(reward, expected):
    fn = SandboxReward({"t/len": (PROBLEM, TESTS)}, reward, workers=2)
    completions = [
        answer("input()\nprint('ok')"),  # passes all tiers
        answer("s = input()\nprint('ok' if len(s) < 1000 else 'no')"),  # fails tier 4 only
        answer("print('no')"),  # fails tier 1
        [{"role": "assistant", "content": "no program here"}],  # format failure: 0, counted
    ]
    assert fn(["p"] * 4, completions, problem_id=["t/len"] * 4) == expected
    stats = fn.history[-1].summary()
    assert stats["frac_format_failure"] == 0.25 and stats["frac_correct"] == 0.25


def test_reward_names_are_checked():
    assert parse_reward("repair:R_inf") == ("R_inf", True)
    with pytest.raises(UserError, match="unknown reward"):
        parse_reward("R_9")


def test_repair_prompt_holds_the_truncated_failure_context():
    ctx = {"tier": 5, "input_len": 40000, "verdict": "TLE", "cpu_s": 2.01, "time_limit_s": 2.0, "mem_mb": 30.0,
           "memory_limit_mb": 256, "diff": "line 1: expected '3', got '4' " * 100}  # fmt: skip
    prompt = repair_prompt(PROBLEM, "print(4)", ctx, max_chars=200)
    assert "verdict TLE on a tier-5 test (40000 input characters)" in prompt
    assert "CPU 2.01s of 2.0s; memory 30.0 of 256 MB" in prompt
    assert "[truncated]" in prompt and "print(4)" in prompt
    failure = prompt.split("Failure:\n", 1)[1].split("\n\nWrite", 1)[0]
    assert len(failure) <= 200


def prime(folder, text: str, steps: int = 60):
    """A few supervised steps so the random model sometimes writes `text`: with every reward 0,
    GRPO's advantages, and so its gradients, would all be zero."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from backend.rollout.prompts import conversation

    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder)
    # the prompt exactly as training renders it (with its public example)
    prompt = tok.apply_chat_template(
        conversation(ECHO, "reasoning", ("xxx\n", "1\n")), tokenize=False, add_generation_prompt=True
    )
    prompt_ids, answer_ids = tok(prompt)["input_ids"], tok(text + tok.eos_token)["input_ids"]
    ids = torch.tensor([prompt_ids + answer_ids])  # tokenized apart: no merge across the boundary
    labels = ids.clone()
    labels[:, : len(prompt_ids)] = -100  # learn the answer, not the prompt
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    for _ in range(steps):
        loss = model(ids, labels=labels).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
    model.save_pretrained(folder)


ECHO = Problem(id="t/one", bench="t", title="One", statement="Print 1.", time_limit_s=1.0)


def test_grpo_trains_on_cpu_with_sandbox_rewards(store, tmp_path):
    from transformers import AutoModelForCausalLM

    from backend.lab.tiny import make_tiny_checkpoint

    base = make_tiny_checkpoint(tmp_path / "base")
    prime(base, "```python\nprint(1)\n```")
    store.put([ECHO])
    store.put([Test(problem_id="t/one", idx=i, input="x" * n + "\n", output="1\n", input_len=n + 1, tier=len(str(n + 1)), is_public=i == 0)
               for i, n in enumerate((3, 30, 300))])  # fmt: skip
    before = load_file(base / "model.safetensors")
    spec = RLSpec(base=str(base), output_dir=str(tmp_path / "out"), reward="R_2", bench="t", steps=2, num_generations=4,
                  per_device_train_batch_size=4, max_completion_length=16, learning_rate=1e-2, save_steps=1, seed=1)  # fmt: skip
    exp = run_rl(store, spec, progress=False)
    final = tmp_path / "out" / "final"
    after = load_file(final / "model.safetensors")
    assert any(not torch.equal(before[k], after[k]) for k in before)  # the weights moved
    AutoModelForCausalLM.from_pretrained(final)  # loadable
    trained = store.select(Checkpoint, {"experiment_id": exp})
    assert {c.step for c in trained} >= {1, 2} and {c.reward for c in trained} == {"R_2"}
    metrics = {(m.step, m.name): m.value for m in store.select(Metric, {"experiment_id": exp})}
    names = {n for _, n in metrics}
    assert {"reward_mean", "pass_R_2", "frac_format_failure", "frac_correct"} <= names
    assert any(n.startswith("completions/mean_length") for n in names)
    assert max(v for (_, n), v in metrics.items() if n == "reward_mean") > 0  # the primed policy sometimes succeeds
