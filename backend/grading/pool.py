"""Where judge jobs run: a process pool over all cores (JudgePool) or Ray CPU tasks (RayJudging), both
behind one Protocol, `Judging`: submit typed jobs (JudgeJob), collect typed results (Judged: the
job's key and the judged sample's Judgement) as they finish.

The worker is a plain function of one JudgeJob (`run_job`), so either runs the same code. A pool
that lives long (an RL rank's, kept across GRPO steps) starts its workers with `spawn`: a fresh
interpreter each, never a fork of a process that holds CUDA, NCCL or threads.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
from collections.abc import Hashable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

from backend.grading.judge import JudgeSetup, JudgeTest, Program, SpecialJudge, format_failure, judge
from backend.grading.limits import JudgeLimits
from backend.records import Judgement

# A job's key, returned with its result: a sweep's SampleKey (what the store files the result under),
# or whatever names a program in the caller's own bookkeeping (an RL batch position, a calibration role).
K = TypeVar("K", bound=Hashable)


@dataclass
class JudgeJob(Generic[K]):
    """One program to judge against one problem's tests, and the key its result comes back under."""

    key: K
    program: Program | None  # None: no program could be extracted (format failure)
    tests: list[JudgeTest]
    limits: JudgeLimits = field(default_factory=JudgeLimits)
    checker: str | SpecialJudge = "exact"
    func_name: str | None = None
    run_all: bool = False
    backend: str = "bwrap"
    format_reason: str = ""

    @classmethod
    def of(cls, key: K, program: Program | None, tests: list[JudgeTest], setup: JudgeSetup, **kw) -> JudgeJob[K]:
        """A job judged as a stored problem is (its limits, checker and method: judge.judge_setup)."""
        return cls(key, program, tests, setup.limits, setup.checker, setup.func_name, **kw)


class Judged(NamedTuple, Generic[K]):
    """A finished job: its key and the judged sample's record."""

    key: K
    judgement: Judgement


def run_job(job: JudgeJob[K]) -> Judged[K]:
    if job.program is None:
        return Judged(job.key, format_failure(job.format_reason or "no program extracted"))
    result = judge(
        job.program,
        job.tests,
        job.limits,
        job.checker,
        backend=job.backend,
        run_all=job.run_all,
        func_name=job.func_name,
    )
    return Judged(job.key, result)


class Judging(Protocol[K]):
    """Where judge jobs run, as a caller sees it: JudgePool (local processes) or RayJudging."""

    def submit(self, jobs: Iterable[JudgeJob[K]]) -> None: ...

    def collect(self, block: bool = False) -> list[Judged[K]]:
        """What has finished; with block, wait for at least one (when any is pending)."""
        ...

    @property
    def pending(self) -> int: ...

    def close(self) -> None: ...


def _worker_init() -> None:
    # multiprocessing workers leave through os._exit, which skips atexit: free containers here.
    from multiprocessing import util

    from backend.sandbox import docker_backend

    util.Finalize(None, docker_backend.remove_containers, exitpriority=10)


def rank_workers(cpus: int | None = None, ranks: int | None = None) -> int:
    """One rank's share of this node's cores: cpu_count // ranks, at least 1. The ranks are this
    node's training processes (LOCAL_WORLD_SIZE, which accelerate and torchrun set; 1 alone)."""
    cpus = cpus or os.cpu_count() or 1
    ranks = ranks or int(os.environ.get("LOCAL_WORLD_SIZE") or 1)
    return max(1, cpus // max(1, ranks))


class JudgePool(Generic[K]):
    """Judging on a process pool over all cores (the local executor's, judge_many's). `start_method`
    None is the platform's default (fork on Linux); "spawn" or "forkserver" for a process that holds
    CUDA or threads."""

    def __init__(self, workers: int | None = None, start_method: str | None = None):
        context = multiprocessing.get_context(start_method) if start_method else None
        self.workers = workers or os.cpu_count() or 2
        self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=context, initializer=_worker_init)
        self._pending: set = set()

    def submit(self, jobs: Iterable[JudgeJob[K]]) -> None:
        self._pending |= {self._pool.submit(run_job, j) for j in jobs}

    def collect(self, block: bool = False) -> list[Judged[K]]:
        if not self._pending:
            return []
        done, self._pending = wait(self._pending, timeout=None if block else 0, return_when=FIRST_COMPLETED)
        return [f.result() for f in done]

    @property
    def pending(self) -> int:
        return len(self._pending)

    def forget_pending(self) -> None:
        """Drop what is still pending (a caller that stopped reading): queued jobs are cancelled,
        running ones finish unread, so the pool's next batch collects only its own results."""
        for future in self._pending:
            future.cancel()
        self._pending = set()

    def close(self) -> None:
        self._pool.shutdown(cancel_futures=True)


def _judge_task(job: JudgeJob[K], tests: list[JudgeTest]) -> Judged[K]:
    """One Ray judge task; `tests` is the problem's list from the object store (Ray resolves the
    reference it was given before the task runs)."""
    return run_job(dataclasses.replace(job, tests=tests))


class RayJudging(Generic[K]):
    """Judging as Ray tasks of one CPU each, on whichever node has one (the Ray executor's). Each
    problem's tests go into the object store once and every judge task of the problem passes the
    reference (a task that carried its own copy serialised the list n × α times)."""

    def __init__(self, ray: Any):  # the connected ray module (sweep/executors.py:connect_ray)
        self.ray = ray
        self._task = ray.remote(num_cpus=1)(_judge_task)
        self._tests: dict[int, tuple[list, Any]] = {}  # id of a problem's test list → (the list, its object ref)
        self._pending: list = []

    def submit(self, jobs: Iterable[JudgeJob[K]]) -> None:
        self._pending += [self._task.remote(dataclasses.replace(j, tests=[]), self._tests_ref(j.tests)) for j in jobs]

    def _tests_ref(self, tests: list[JudgeTest]) -> Any:
        """The problem's tests in the object store, put on first use. The pipeline hands every
        sample of a problem the same list, so the list's identity names the problem's tests; the
        list is kept alive with its reference, so the identity is never reused."""
        held = self._tests.get(id(tests))
        if held is None:
            held = self._tests[id(tests)] = (tests, self.ray.put(tests))
        return held[1]

    def collect(self, block: bool = False) -> list[Judged[K]]:
        if not self._pending:
            return []
        ready, self._pending = self.ray.wait(
            self._pending, num_returns=1 if block else len(self._pending), timeout=None if block else 0
        )
        return self.ray.get(ready)

    @property
    def pending(self) -> int:
        return len(self._pending)

    def close(self) -> None:
        self._pending = []  # the cluster outlives the job: tasks still running finish unread
        self._tests.clear()  # the problems' tests leave the object store with their references


def judge_many(
    jobs: Iterable[JudgeJob[K]], workers: int | None = None, max_pending: int = 64, pool: JudgePool[K] | None = None
) -> Iterator[Judged[K]]:
    """Yield (key, judgement) in completion order; at most max_pending jobs are in flight. On a
    fresh pool of `workers`, closed at the end, or on the caller's `pool`, which stays open."""
    own = pool is None
    pool = JudgePool(workers) if own else pool
    try:
        for job in jobs:
            pool.submit([job])
            if pool.pending >= max_pending:
                yield from pool.collect(block=True)
        while pool.pending:
            yield from pool.collect(block=True)
    finally:
        if own:
            pool.close()
        else:
            pool.forget_pending()
