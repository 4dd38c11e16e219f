"""RL rewards computed by the real sandbox judge (backend.grading.pool), on one pool per training
process: started at the first reward call with `spawn`, sized to this rank's share of the node's
cores (cpu_count // ranks), reused by every step and closed when training ends.

Binary R_k (k = 1…6) and R_inf, static shaping (partial credit: discrete = fraction of tiers passed,
continuous = fraction of tests passed), and the repair prompt built from a failure context. A
completion with no extractable program gets reward 0 and is counted as a format failure.
"""

from __future__ import annotations

from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field

from backend.errors import UserError
from backend.grading.judge import FailureContext, JudgeTest, Program, failure_context, judge_setup
from backend.grading.pool import JudgeJob, JudgePool, judge_many, rank_workers
from backend.outcomes import OUTCOME_CLASSES, OutcomeClass
from backend.records import REWARD_NAMES, Judgement, Problem, reward_value
from backend.rollout.extract import extract_code

REWARDS = REWARD_NAMES  # the judge computes every one of them for every evaluation
BINARY = tuple(r for r in REWARDS if not r.startswith("partial"))


def parse_reward(name: str) -> tuple[str, bool]:
    """(the reward to score with, whether online repair is on): `R_2`, `R_inf`, `partial_discrete`,
    `partial_continuous`, or `repair:R_inf`."""
    repair = name.startswith("repair:")
    base = name.removeprefix("repair:")
    if base not in REWARDS:
        raise UserError(f"unknown reward {name!r}; use one of {', '.join(REWARDS)} or repair:R_k")
    return base, repair


@dataclass
class RewardStats:
    """What one reward call saw: the training metrics of that step."""

    rewards: list[float] = field(default_factory=list)
    outcomes: list[str] = field(default_factory=list)
    tier_passed: list[dict] = field(default_factory=list)
    is_repair: list[bool] = field(default_factory=list)

    def summary(self) -> dict[str, float]:
        n = max(len(self.outcomes), 1)
        out = {"reward_mean": sum(self.rewards) / max(len(self.rewards), 1)}
        out |= {f"frac_{o}": self.outcomes.count(o) / n for o in OUTCOME_CLASSES}
        for k in BINARY:
            out[f"pass_{k}"] = sum(t.get(k, 0.0) for t in self.tier_passed) / n
        if self.is_repair:  # online repair: originals and repairs reported apart
            original = [o == OutcomeClass.CORRECT for o, r in zip(self.outcomes, self.is_repair, strict=True) if not r]
            repaired = [o == OutcomeClass.CORRECT for o, r in zip(self.outcomes, self.is_repair, strict=True) if r]
            out["original_pass_rate"] = sum(original) / max(len(original), 1)
            out["repair_samples"] = float(len(repaired))
            if repaired:
                out["repair_success_rate"] = sum(repaired) / len(repaired)
        return out


class RepairPool:
    """Failed programs waiting for a repair attempt, in a fixed number of slots (newest replace
    oldest). The GRPO dataset reads the slots, so repair prompts join training as failures occur."""

    def __init__(self, slots: int, max_chars: int = 600, prompt_format: str = "chat"):
        self.slots: list[dict | None] = [None] * slots
        self.max_chars, self._next, self.prompt_format = max_chars, 0, prompt_format

    def add(self, problem: Problem, code: str, context: FailureContext | None) -> None:
        from backend.rollout.prompts import SYSTEM, render

        messages = [
            {"role": "system", "content": SYSTEM["reasoning"]},
            {"role": "user", "content": repair_prompt(problem, code, context, self.max_chars)},
        ]
        prompt = render(messages, "reasoning", self.prompt_format)  # the run's format, as its other prompts
        self.slots[self._next] = {"prompt": prompt, "problem_id": problem.id, "repair": True}
        self._next = (self._next + 1) % len(self.slots)


class SandboxReward:
    """A TRL reward function: reward(prompts, completions, problem_id=[...]) -> list[float].
    It owns this rank's judging pool: close() it (or use it as a context manager) when training ends."""

    def __init__(
        self,
        problems: dict[str, tuple[Problem, list[JudgeTest]]],
        reward: str,
        backend: str = "bwrap",
        workers: int | None = None,
    ):
        self.problems, self.backend, self.workers = problems, backend, workers
        self.reward, self.repair = parse_reward(reward)
        self.__name__ = f"sandbox_{self.reward}"  # TRL logs rewards under the function's name
        self.history: list[RewardStats] = []
        self.pool: RepairPool | None = None  # set for online repair: failures feed it
        self._judging: JudgePool | None = None  # this rank's judging pool, from the first call on

    def __call__(self, prompts, completions, problem_id, repair=None, **_) -> list[float]:
        texts = [c[-1]["content"] if isinstance(c, list) else c for c in completions]
        repair = list(repair) if repair is not None else [False] * len(texts)
        results = self.judge(texts, problem_id)
        stats = RewardStats()
        for text, pid, is_repair, r in zip(texts, problem_id, repair, results, strict=True):
            value = reward_value(r.rewards, self.reward)
            stats.rewards.append(value)
            stats.outcomes.append(r.outcome)
            stats.tier_passed.append({k: reward_value(r.rewards, k) for k in BINARY})
            if self.pool is not None:
                stats.is_repair.append(bool(is_repair))
                if value < 1.0 and r.verdict != "FORMAT" and not is_repair:  # a program to repair, CE included
                    problem = self.problems[pid][0]
                    context = failure_context(r, judge_setup(problem).limits)
                    self.pool.add(problem, extract_code(text, "python", "stop").code, context)
        self.history.append(stats)
        return stats.rewards

    def judge(self, texts: list[str], problem_ids: list[str]) -> list[Judgement]:
        jobs = []
        for i, (text, pid) in enumerate(zip(texts, problem_ids, strict=True)):
            problem, tests = self.problems[pid]
            found = extract_code(text, "python", "stop")
            setup = judge_setup(problem)
            # every test runs, so partial credit is exact
            jobs.append(
                JudgeJob(
                    i,
                    Program(found.code) if found.ok else None,
                    tests,
                    setup.limits,
                    setup.checker,
                    setup.func_name,
                    run_all=True,
                    backend=self.backend,
                    format_reason=found.error or "",
                )
            )
        try:
            results = dict(judge_many(jobs, pool=self.judging()))
        except BrokenProcessPool:  # a worker was killed (the host's OOM killer): this batch again, on a fresh pool
            self.close()
            results = dict(judge_many(jobs, pool=self.judging()))
        return [results[i] for i in range(len(jobs))]

    def judging(self) -> JudgePool:
        """The rank's pool, started once. Its workers are spawned: a rank holds CUDA, NCCL and an
        in-process vLLM's threads, which a fork would copy in whatever state they are in."""
        if self._judging is None:
            self._judging = JudgePool(self.workers or rank_workers(), start_method="spawn")
        return self._judging

    def close(self) -> None:
        if self._judging is not None:
            judging, self._judging = self._judging, None
            judging.close()

    def __enter__(self) -> SandboxReward:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def repair_prompt(problem: Problem, code: str, context: FailureContext | None, max_chars: int = 600) -> str:
    """The failed program and what went wrong (tier, verdict, time and memory against the limits,
    a short diff), truncated to max_chars, as a prompt for a repair attempt."""
    facts = _failure_facts(context) if context else ["the judge could not run it (a sandbox error)"]
    failure = "\n".join(facts)
    if len(failure) > max_chars:
        failure = failure[: max_chars - 15] + " [truncated]"
    return (
        f"{problem.title}\n\n{problem.statement}\n\nThis program failed:\n```python\n{code.strip()}\n```\n"
        f"Failure:\n{failure}\n\nWrite a corrected, efficient program in a ```python code block."
    )


def _failure_facts(context: FailureContext) -> list[str]:
    facts = [f"verdict {context.verdict} on a tier-{context.tier} test ({context.input_len} input characters)"]
    if context.time_limit_s is not None:
        limits = (
            f"CPU {context.cpu_s}s of {context.time_limit_s}s; memory {context.mem_mb} of {context.memory_limit_mb} MB"
        )
        facts.append(limits)
    facts += [f"{key}: {text}" for key, text in (("diff", context.diff), ("stderr", context.stderr)) if text]
    return facts
