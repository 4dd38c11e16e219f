import json
import os

import psutil
import pytest
import torch
from safetensors.torch import load_file

from backend.errors import UserError
from backend.grading.judge import FailureContext, JudgeTest
from backend.records import Checkpoint, Experiment, Metric, Problem, Test, reward_value
from backend.rl.rewards import RepairPool, SandboxReward, parse_reward, repair_prompt
from backend.rl.spec import RLSpec
from backend.rl.trainer import run_rl
from tests.conftest import run_cli, wait_until

# input lengths 4, 31, 301, 3001: tiers 1..4
TESTS = [JudgeTest("x" * n + "\n", "ok\n") for n in (3, 30, 300, 3000)]
PROBLEM = Problem(id="t/len", bench="t", title="Length", statement="-", time_limit_s=1.0)


def answer(code: str) -> list[dict]:
    return [{"role": "assistant", "content": f"```python\n{code}\n```"}]


@pytest.fixture(scope="module")
def judged_reward():
    """One repair:R_inf reward and its judging pool, shared by the tests that judge a few programs."""
    with SandboxReward({"t/len": (PROBLEM, TESTS)}, "repair:R_inf", workers=2) as fn:
        yield fn


REWARD_VALUES = {"R_1": [1, 1, 0, 0], "R_3": [1, 1, 0, 0], "R_4": [1, 0, 0, 0], "R_inf": [1, 0, 0, 0],
                 "partial_continuous": [1.0, 0.75, 0.0, 0.0], "partial_discrete": [1.0, 0.75, 0.0, 0.0]}  # fmt: skip


def test_reward_values_from_the_real_judge(judged_reward):
    completions = [
        answer("input()\nprint('ok')"),  # passes all tiers
        answer("s = input()\nprint('ok' if len(s) < 1000 else 'no')"),  # fails tier 4 only
        answer("print('no')"),  # fails tier 1
        [{"role": "assistant", "content": "no program here"}],  # format failure: 0, counted
    ]
    judged = judged_reward.judge([c[-1]["content"] for c in completions], ["t/len"] * 4)
    for reward, expected in REWARD_VALUES.items():  # what each reward scores on the same verdicts
        assert [reward_value(r.rewards, parse_reward(reward)[0]) for r in judged] == expected, reward
    judged_reward.pool = RepairPool(slots=4)
    assert judged_reward(["p"] * 4, completions, problem_id=["t/len"] * 4) == REWARD_VALUES["R_inf"]
    stats = judged_reward.history[-1].summary()
    assert stats["frac_format_failure"] == 0.25 and stats["frac_correct"] == 0.25


def judging_workers() -> set[int]:
    """This process's judging workers as the OS lists them: children started by multiprocessing's
    spawn (a fresh interpreter; a forked worker would carry this process's command line)."""
    children = psutil.Process().children()
    return {c.pid for c in children if "multiprocessing.spawn" in " ".join(c.cmdline())}


def test_a_rank_judges_every_call_on_one_spawned_pool_of_its_share_of_the_cores(monkeypatch):
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "2")  # two training processes on this node
    before = judging_workers()
    fn = SandboxReward({"t/len": (PROBLEM, TESTS)}, "R_inf")
    seen = []
    for _ in range(3):  # three GRPO steps' reward calls
        assert fn(["p"] * 2, [answer("input()\nprint('ok')"), answer("print('no')")], problem_id=["t/len"] * 2) == [
            1,
            0,
        ]
        seen.append(judging_workers() - before)
    assert len(seen[0]) == max(1, os.cpu_count() // 2)  # cpu_count // ranks
    assert seen[1] == seen[0] and seen[2] == seen[0]  # no process started after the first call
    fn.close()
    wait_until(lambda: not judging_workers() & seen[0], timeout=30, what="the pool's workers to exit at close")


@pytest.mark.slow
def test_a_step_whose_judging_worker_is_killed_is_judged_again_on_a_fresh_pool():
    """The host's OOM killer takes a judging worker mid-step: the step's batch is judged again on
    a fresh pool (the old one is broken for good), and the steps after it use that pool."""
    import signal
    import threading

    before = judging_workers()
    killed: list[int] = []

    def kill_the_worker():
        worker = wait_until(lambda: judging_workers() - before, timeout=60, what="a judging worker")
        os.kill(min(worker), signal.SIGKILL)
        killed.append(min(worker))

    slow = answer("import time\ntime.sleep(2)\ninput()\nprint('ok')")  # asleep when the worker is killed
    with SandboxReward({"t/len": (PROBLEM, TESTS)}, "R_inf", workers=1) as fn:
        killer = threading.Thread(target=kill_the_worker)
        killer.start()
        assert fn(["p"] * 2, [slow, answer("print('no')")], problem_id=["t/len"] * 2) == [1, 0]
        killer.join()
        after = judging_workers() - before
        assert killed and killed[0] not in after and len(after) == 1  # one fresh worker
        assert fn(["p"], [answer("print('no')")], problem_id=["t/len"]) == [0]
        assert judging_workers() - before == after


def test_reward_names_are_checked():
    assert parse_reward("repair:R_inf") == ("R_inf", True)
    with pytest.raises(UserError, match="unknown reward"):
        parse_reward("R_9")


def test_repair_prompt_holds_the_truncated_failure_context():
    ctx = FailureContext("TLE", tier=5, input_len=40000, cpu_s=2.01, time_limit_s=2.0, mem_mb=30.0,
                         memory_limit_mb=256, diff="line 1: expected '3', got '4' " * 100)  # fmt: skip
    prompt = repair_prompt(PROBLEM, "print(4)", ctx, max_chars=200)
    assert "verdict TLE on a tier-5 test (40000 input characters)" in prompt
    assert "CPU 2.01s of 2.0s; memory 30.0 of 256 MB" in prompt
    assert "[truncated]" in prompt and "print(4)" in prompt
    failure = prompt.split("Failure:\n", 1)[1].split("\n\nWrite", 1)[0]
    assert len(failure) <= 200


def test_online_repair_turns_failures_into_repair_prompts_and_reports_them_apart(judged_reward):
    fn = judged_reward
    fn.pool = RepairPool(slots=2, max_chars=300)
    originals = [answer("s = input()\nprint('ok' if len(s) < 1000 else 'no')"), answer("input()\nprint('ok')"),
                 [{"role": "assistant", "content": "no program"}]]  # fmt: skip
    assert fn(["p"] * 3, originals, problem_id=["t/len"] * 3, repair=[False] * 3) == [0, 1, 0]
    slot = fn.pool.slots[0]
    assert fn.pool.slots[1] is None  # the correct one and the format failure give nothing to repair
    assert slot["repair"] and slot["problem_id"] == "t/len"
    text = slot["prompt"][-1]["content"]
    assert "len(s) < 1000" in text and "verdict WA on a tier-4 test (3001 input characters)" in text
    stats = fn.history[-1].summary()
    assert stats["original_pass_rate"] == 1 / 3 and stats["repair_samples"] == 0
    # a round with two repair attempts (one fixed, one not) and one original
    repairs = [answer("input()\nprint('ok')"), answer("print('no')"), answer("input()\nprint('ok')")]
    assert fn(["p"] * 3, repairs, problem_id=["t/len"] * 3, repair=[True, True, False]) == [1, 0, 1]
    stats = fn.history[-1].summary()
    assert stats["repair_success_rate"] == 0.5 and stats["repair_samples"] == 2 and stats["original_pass_rate"] == 1.0
    assert fn.pool.slots[1] is None  # failed repairs are not queued again


@pytest.mark.slow
def test_grpo_with_online_repair_trains_on_repair_prompts(store, tmp_path):
    from backend.lab.tiny import make_tiny_checkpoint

    base = make_tiny_checkpoint(tmp_path / "base")
    prime(base, "```python\nprint(1)\n```")
    store.put([ECHO])
    # print(1) passes the small tests and fails the tier-3 one: every program is a failure to repair
    store.put([Test(problem_id="t/one", idx=i, input="x" * n + "\n", output=out, input_len=n + 1, tier=len(str(n + 1)),
                    is_public=i == 0)
               for i, (n, out) in enumerate(((3, "1\n"), (30, "1\n"), (300, "2\n")))])  # fmt: skip
    spec = RLSpec(base=str(base), output_dir=str(tmp_path / "out"), reward="repair:R_inf", bench="t", steps=3,
                  num_generations=4, per_device_train_batch_size=8, max_completion_length=16, learning_rate=1e-2,
                  save_steps=3, seed=1)  # fmt: skip
    exp = run_rl(store, spec, progress=False)
    metrics = {(m.step, m.name): m.value for m in store.select(Metric, {"experiment_id": exp})}
    assert metrics[(1, "repair_samples")] == 0  # no failures seen before the first step
    assert sum(metrics[(s, "repair_samples")] for s in (2, 3)) >= 4  # then repair prompts are sampled
    assert all((s, "original_pass_rate") in metrics for s in (1, 2, 3))


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


@pytest.mark.slow
def test_grpo_trains_on_cpu_with_sandbox_rewards(store, tmp_path, monkeypatch):
    from transformers import AutoModelForCausalLM

    from backend.lab.tiny import make_tiny_checkpoint

    base = make_tiny_checkpoint(tmp_path / "base")
    prime(base, "```python\nprint(1)\n```")
    store.put([ECHO])
    store.put([Test(problem_id="t/one", idx=i, input="x" * n + "\n", output="1\n", input_len=n + 1,
                    tier=len(str(n + 1)), is_public=i == 0)
               for i, n in enumerate((3, 30, 300))])  # fmt: skip
    before = load_file(base / "model.safetensors")
    spec = RLSpec(base=str(base), output_dir=str(tmp_path / "out"), reward="R_2", bench="t", steps=2, num_generations=4,
                  per_device_train_batch_size=4, max_completion_length=16, learning_rate=1e-2, save_steps=1,
                  seed=1)  # fmt: skip
    workers_per_step, already = [], judging_workers()
    judge = SandboxReward.__call__

    def counting(self, *args, **kw):  # each step's reward call, then the judging workers alive
        rewards = judge(self, *args, **kw)
        workers_per_step.append(judging_workers() - already)
        return rewards

    monkeypatch.setattr(SandboxReward, "__call__", counting)
    exp = run_rl(store, spec, progress=False)
    assert len(workers_per_step) == 2 and len(workers_per_step[0]) == os.cpu_count()  # one worker per core, spawned
    assert workers_per_step[1] == workers_per_step[0]  # step 2 judged on step 1's pool: no process started
    assert not judging_workers() & workers_per_step[0]  # closed when training ended
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


@pytest.mark.slow
def test_rl_runs_as_a_job_that_resumes_from_its_last_checkpoint_after_kill_9(store, tmp_path):
    """A detached RL job is killed (-9) after its first checkpoint; resume continues from that
    checkpoint (it is not rewritten) to the final step, with progress in the job row."""
    import os
    import signal

    from backend.jobs import runner
    from backend.lab.tiny import make_tiny_checkpoint
    from backend.records import Job

    base = make_tiny_checkpoint(tmp_path / "base")
    prime(base, "```python\nprint(1)\n```")
    store.put([ECHO])
    store.put([Test(problem_id="t/one", idx=i, input="x" * n + "\n", output="1\n", input_len=n + 1,
                    tier=len(str(n + 1)), is_public=i == 0)
               for i, n in enumerate((3, 30, 300))])  # fmt: skip
    out = tmp_path / "out"
    # every checkpoint kept (6 of 12 steps / 2): checkpoint-2 is the one the resume must leave as it was
    spec = RLSpec(base=str(base), output_dir=str(out), reward="R_inf", bench="t", steps=12, num_generations=4,
                  per_device_train_batch_size=4, max_completion_length=16, learning_rate=1e-2, save_steps=2, seed=1,
                  keep_checkpoints=6)  # fmt: skip
    job = runner.create_job(store, spec)
    assert store.get(Experiment, job.experiment_id).kind == "rl"
    pid = runner.start(store, job.id)
    state = out / "checkpoint-2" / "trainer_state.json"  # written last

    def written():  # whole, not merely created: a kill mid-write tears the checkpoint, and resume rightly restarts
        try:
            return isinstance(json.loads(state.read_text()), dict)
        except (OSError, ValueError):
            return False

    wait_until(written, timeout=240, what=f"a complete checkpoint-2 (log: {job.log_path})")
    os.killpg(os.getpgid(pid), signal.SIGKILL)
    wait_until(
        lambda: runner.observed(runner.get_job(store, job.id)).status == "failed", what="the killed job seen as failed"
    )
    first = (out / "checkpoint-2" / "model.safetensors").stat().st_mtime_ns
    runner.resume(store, job.id, detach=False)
    done = store.get(Job, job.id)
    assert done.status == "done" and done.progress["train"]["done"] == 12 and done.progress["train"]["total"] == 12
    assert (out / "checkpoint-2" / "model.safetensors").stat().st_mtime_ns == first  # resumed, not restarted
    assert (out / "checkpoint-12").is_dir() and (out / "final" / "model.safetensors").is_file()
    steps = {m.step for m in store.select(Metric, {"experiment_id": job.experiment_id})}
    assert {11, 12} <= steps
    assert {c.step for c in store.select(Checkpoint, {"experiment_id": job.experiment_id})} >= {2, 12}


def test_resume_skips_a_checkpoint_torn_by_a_kill(tmp_path):
    from backend.rl.task import last_complete_checkpoint

    for n, state in ((2, "{}"), (4, "{}"), (6, None), (8, '{"trunc')):
        (tmp_path / f"checkpoint-{n}").mkdir()
        if state is not None:
            (tmp_path / f"checkpoint-{n}" / "trainer_state.json").write_text(state)
    assert last_complete_checkpoint(tmp_path) == str(tmp_path / "checkpoint-4")
    assert last_complete_checkpoint(tmp_path / "missing") is None


@pytest.mark.slow
def test_rl_job_on_the_ray_executor_runs_as_a_ray_task_and_refuses_a_missing_gpu(store, tmp_path):
    """On a real local Ray cluster (CPU only): gpus=0 trains as a Ray task and registers the
    final checkpoint; asking for a GPU the cluster lacks is refused with one line."""
    from backend.jobs import runner
    from backend.lab.tiny import make_tiny_checkpoint
    from backend.sweep.pipeline import Progress

    base = make_tiny_checkpoint(tmp_path / "base")
    store.put([ECHO])
    store.put([Test(problem_id="t/one", idx=0, input="x\n", output="1\n", input_len=2, tier=1, is_public=True)])
    common = dict(base=str(base), reward="R_inf", bench="t", steps=1, num_generations=2, per_device_train_batch_size=2,
                  max_completion_length=8, save_steps=1, executor="ray")  # fmt: skip
    with pytest.raises(UserError, match="no node with 1 GPU"):
        runner.run_training(store, RLSpec(output_dir=str(tmp_path / "gpu"), **common), "rl-gpu", Progress(store, "j"))
    exp = runner.run_training(store, RLSpec(output_dir=str(tmp_path / "cpu"), gpus=0, **common), "rl-cpu",
                              Progress(store, "j"))  # fmt: skip
    assert exp == "rl-cpu" and (tmp_path / "cpu" / "final" / "model.safetensors").is_file()
    assert {c.step for c in store.select(Checkpoint, {"experiment_id": "rl-cpu"})} == {1}


@pytest.mark.slow
def test_use_vllm_without_vllm_is_one_line_before_any_job(store, tmp_path, db_path):
    from backend.lab.tiny import make_tiny_checkpoint
    from backend.records import Job
    from backend.rl.task import vllm_options

    base = make_tiny_checkpoint(tmp_path / "base")
    spec = RLSpec(base=str(base), output_dir=str(tmp_path / "out"))
    assert vllm_options(spec) == {"use_vllm": False}
    with pytest.raises(UserError, match="--use-vllm needs vLLM on a CUDA machine: build it with `make gpu-env`"):
        vllm_options(spec.model_copy(update={"use_vllm": True}))
    out = run_cli(
        "rl", "--base", str(base), "--out", str(tmp_path / "out"), "--use-vllm", "--steps", "1", "--db", str(db_path)
    )
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "make gpu-env" in out.stderr
    from backend.store import Store

    assert Store(db_path).count(Job) == 0


def test_use_vllm_names_the_colocate_mode(monkeypatch):
    """TRL's vllm_mode default changed between versions: we always say which mode we mean."""
    import importlib.util

    from backend.rl import task

    monkeypatch.setattr(task, "cuda_available", lambda: True)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: object() if name == "vllm" else None)
    spec = RLSpec(base="b", output_dir="o", use_vllm=True)
    assert task.vllm_options(spec) == {"use_vllm": True, "vllm_mode": "colocate"}


@pytest.mark.slow
def test_an_rl_job_on_a_base_checkpoint_trains_on_plain_prompts_and_saves_in_the_base_dtype(
    store, tmp_path, monkeypatch
):
    """A base checkpoint (no chat template, bf16) trains with TRL's standard format: the rollout's
    plain prompt as a string; asked to save in the base's dtype, its checkpoints come back in bf16,
    not TRL's float32, each with what the rounding kept of the update."""
    from safetensors import safe_open
    from transformers import AutoModelForCausalLM

    from backend.jobs import runner
    from backend.lab.tiny import make_tiny_checkpoint
    from backend.records import Job
    from backend.rollout.prompts import SYSTEM, problem_prompt

    base = make_tiny_checkpoint(tmp_path / "base")
    (base / "chat_template.jinja").unlink()
    AutoModelForCausalLM.from_pretrained(base).to(torch.bfloat16).save_pretrained(base)
    store.put([ECHO])
    store.put([Test(problem_id="t/one", idx=0, input="x\n", output="1\n", input_len=2, tier=1, is_public=True)])
    seen = []
    judge = SandboxReward.__call__
    monkeypatch.setattr(
        SandboxReward,
        "__call__",
        lambda self, prompts, *a, **kw: seen.extend(prompts) or judge(self, prompts, *a, **kw),
    )
    out = tmp_path / "out"
    spec = RLSpec(base=str(base), output_dir=str(out), bench="t", steps=1, num_generations=2,
                  per_device_train_batch_size=2, max_completion_length=8, save_steps=1, seed=1,
                  save_dtype="base")  # fmt: skip
    job = runner.create_job(store, spec)
    runner.run_job_here(store, job.id)
    assert store.get(Job, job.id).status == "done", store.get(Job, job.id).error
    assert store.get(Experiment, job.experiment_id).spec["prompt_format"] == "plain"
    plain = problem_prompt(ECHO, ("x\n", "1\n")) + "\n\n" + SYSTEM["reasoning"] + "\n\nSolution:\n"
    assert seen and set(seen) == {plain}
    for folder in (out / "checkpoint-1", out / "final"):
        with safe_open(str(folder / "model.safetensors"), "pt") as f:
            assert {f.get_tensor(k).dtype for k in f.keys()} == {torch.bfloat16}  # noqa: SIM118
    AutoModelForCausalLM.from_pretrained(out / "final")  # loadable
    kept = {m.name for m in store.select(Metric, {"experiment_id": job.experiment_id}) if m.name.startswith("saved_")}
    assert kept == {"saved_update_kept_share", "saved_update_norm_ratio"}


def test_a_program_that_does_not_parse_is_a_format_failure_but_still_queued_for_repair(judged_reward):
    """CE counts as a format failure (no runnable program), yet there is a program to repair, as before."""
    fn = judged_reward
    fn.pool = RepairPool(slots=1, max_chars=300)
    assert fn(["p"], [answer("def broken(:\n    pass")], problem_id=["t/len"], repair=[False]) == [0]
    assert fn.history[-1].outcomes == ["format_failure"]
    slot = fn.pool.slots[0]
    assert slot is not None and "def broken(:" in slot["prompt"][-1]["content"]
