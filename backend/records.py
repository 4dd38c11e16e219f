"""Rows of the database, one dataclass per entity (see db/schema.sql).

These are the typed boundary between the pipeline stages and backend/store.py. Fields typed plain
`dict`/`list` are stored as JSON text; a field typed with a dataclass of this module (or a list of
one) is a DuckDB STRUCT (or LIST of STRUCT) whose fields are the dataclass's; a field typed with an
enumeration (Verdict, OutcomeClass) is its text; everything else maps one-to-one onto a column.

A judged sample is one record from the judge to the store: the judge returns its `Judgement`, the
pipeline files it under its sample's key (`Evaluation.of`), and the store writes that row.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, fields
from typing import NamedTuple

from backend.outcomes import OutcomeClass, Verdict


def tier_of(input_len: int) -> int:
    """The smallest k with input_len < 10**k (docs/method.md, Rewards of nested coverage), never below 1."""
    return max(1, len(str(max(0, int(input_len)))))


@dataclass
class Problem:
    id: str  # bench/slug
    bench: str
    title: str
    statement: str
    kind: str = "stdin"  # stdin | functional
    time_limit_s: float = 2.0
    memory_limit_mb: int = 256
    checker: str = "exact"  # exact | float:<tol> | special
    input_spec: str | None = None
    output_spec: str | None = None
    difficulty: str | None = None  # easy | medium | hard
    starter_code: str | None = None
    func_name: str | None = None
    checker_source: str | None = None
    platform: str | None = None
    contest_date: str | None = None
    tags: list = field(default_factory=list)
    judge_error: str | None = None  # set at import when the problem cannot be judged (its checker does not compile)


@dataclass
class Test:
    __test__ = False  # not a pytest class

    problem_id: str
    idx: int
    input: str | None
    output: str | None
    input_len: int
    tier: int
    is_public: bool = False


@dataclass
class Checkpoint:
    id: str
    path: str
    kind: str  # base | trained | merged
    label: str | None = None
    low_id: str | None = None
    high_id: str | None = None
    alpha: float | None = None
    weights: dict | None = None
    reward: str | None = None
    setting: str | None = None
    step: int | None = None
    experiment_id: str | None = None
    content_hash: str | None = None
    model_type: str | None = None
    created_at: dt.datetime | None = None


@dataclass
class Experiment:
    id: str
    kind: str  # sweep | eval | rl | rollout
    name: str
    spec: dict | None = None
    note: str | None = None
    status: str = "created"
    created_at: dt.datetime | None = None


@dataclass
class Job:
    id: str
    kind: str
    status: str  # queued | running | done | failed | cancelled
    experiment_id: str | None = None
    stage: str | None = None
    progress: dict | None = None
    error: str | None = None
    log_path: str | None = None
    pid: int | None = None
    created_at: dt.datetime | None = None
    updated_at: dt.datetime | None = None


@dataclass
class Sample:
    experiment_id: str
    checkpoint_id: str
    problem_id: str
    sample_idx: int
    setting: str | None = None
    completion: str | None = None
    transcript: list | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None
    code: str | None = None
    language: str | None = None
    extract_error: str | None = None
    latency_s: float | None = None


class SampleKey(NamedTuple):
    """Which sample of an experiment: what a judge job carries back to the store with its result."""

    checkpoint_id: str
    problem_id: str
    sample_idx: int


@dataclass
class TestResult:
    """One test of a judged sample, as the judge measured it and an evaluation stores it."""

    __test__ = False  # not a pytest class

    index: int  # the test's idx among the problem's tests
    input_len: int
    tier: int
    verdict: Verdict | None  # None: not run (judging stopped at an earlier failure)
    cpu_s: float = 0.0
    wall_s: float = 0.0
    mem_mb: float = 0.0
    detail: str = ""  # checker message, stderr tail or compile error


@dataclass
class Rewards:
    """The nested-coverage rewards of one sample (docs/method.md): R_k = 1 iff every test with input
    shorter than 10^k characters passed, R_inf iff every test passed, and two partial credits."""

    R_1: float
    R_2: float
    R_3: float
    R_4: float
    R_5: float
    R_6: float
    R_inf: float
    partial_discrete: float  # share of tiers whose every test passed
    partial_continuous: float  # share of tests passed


MAX_TIER = 6  # R_1..R_6; R_inf covers every test, whatever its length
REWARD_NAMES = tuple(f.name for f in fields(Rewards))


def rewards(results: list[TestResult]) -> Rewards:
    """R_k = 1 iff every test with input_len < 10^k passed; tests not run count as not passed.

    With stop-at-first judging in ascending length, R_k is exact anyway: every test shorter than
    the first failure was run. Partial credit is exact only with run_all.
    """
    passed = [r.verdict == Verdict.AC for r in results]
    out: dict[str, float] = {}
    for k in range(1, MAX_TIER + 1):
        out[f"R_{k}"] = float(all(p for r, p in zip(results, passed, strict=True) if r.input_len < 10**k))
    out["R_inf"] = float(all(passed))
    tiers = sorted({r.tier for r in results})
    full = [t for t in tiers if all(p for r, p in zip(results, passed, strict=True) if r.tier == t)]
    out["partial_discrete"] = len(full) / len(tiers) if tiers else 0.0
    out["partial_continuous"] = sum(passed) / len(passed) if passed else 0.0
    return Rewards(**out)


def zero_rewards() -> Rewards:
    return Rewards(**dict.fromkeys(REWARD_NAMES, 0.0))


def reward_value(reward: Rewards, name: str) -> float:
    """One reward by its name in REWARD_NAMES (R_3, R_inf, partial_discrete, ...)."""
    if name not in REWARD_NAMES:
        raise ValueError(f"no reward {name!r}; rewards: {', '.join(REWARD_NAMES)}")
    return getattr(reward, name)


def highest_tier_passed(reward: Rewards) -> int:
    return max((k for k in range(1, MAX_TIER + 1) if reward_value(reward, f"R_{k}") == 1.0), default=0)


@dataclass(kw_only=True)
class Judgement:
    """One judged sample, as the judge returns it and (filed under its sample's key: Evaluation) as
    the store keeps it: the first failing test's verdict and its class, tiers, the largest CPU and
    memory of its tests, a row per test, the rewards, and a format failure's reason. Fields may be
    None only in rows stored before they existed."""

    outcome: OutcomeClass
    verdict: Verdict | None = None  # the first failing test's verdict, or AC
    first_failing_test: int | None = None  # its index among the problem's tests
    first_failing_tier: int | None = None
    highest_tier_passed: int | None = None
    cpu_s: float | None = None  # the largest of its tests' figures
    mem_mb: float | None = None
    accounting: str | None = None  # how they were measured: cgroup-v2 | cgroup-v1 | rlimits; None: nothing ran
    rewards: Rewards | None = None
    test_results: list[TestResult] | None = None  # in test index order; a test after the first failure keeps
    # the start of its detail only (the judge's DETAIL_KEPT)
    format_reason: str | None = None  # a format failure's reason: why no program could be extracted

    @property
    def first_failure(self) -> TestResult | None:
        return next((t for t in self.test_results or () if t.index == self.first_failing_test), None)

    @property
    def compile_error(self) -> str | None:
        """The compiler's (or the interpreter's parse) message of a program that does not load."""
        return self.first_failure.detail if self.verdict == Verdict.CE and self.first_failure else None


@dataclass
class Evaluation(Judgement):
    """A judged sample filed under its sample's key: one row of `evaluations`."""

    experiment_id: str
    checkpoint_id: str
    problem_id: str
    sample_idx: int

    @classmethod
    def of(cls, experiment_id: str, key: SampleKey, judged: Judgement) -> Evaluation:
        """The judge's record as it is, with its sample's keys attached."""
        return cls(experiment_id, *key, **vars(judged))


@dataclass
class Metric:
    experiment_id: str
    step: int
    name: str
    value: float | None


# table name and primary-key columns of each entity
TABLES: dict[type, tuple[str, tuple[str, ...]]] = {
    Problem: ("problems", ("id",)),
    Test: ("tests", ("problem_id", "idx")),
    Checkpoint: ("checkpoints", ("id",)),
    Experiment: ("experiments", ("id",)),
    Job: ("jobs", ("id",)),
    Sample: ("samples", ("experiment_id", "checkpoint_id", "problem_id", "sample_idx")),
    Evaluation: ("evaluations", ("experiment_id", "checkpoint_id", "problem_id", "sample_idx")),
    Metric: ("metrics", ("experiment_id", "step", "name")),
}
