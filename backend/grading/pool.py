"""Where judge jobs run: a process pool over all cores (JudgePool) or Ray CPU tasks (RayJudging), both
behind one Protocol, `Judging`: submit typed jobs (JudgeJob), collect typed results (Judged: the
job's key and the judged sample's Judgement) as they finish.

The worker is a plain function of one JudgeJob (`run_job`), so either runs the same code.
"""

from __future__ import annotations

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


class JudgePool(Generic[K]):
    """Judging on a process pool over all cores (the local executor's, judge_many's)."""

    def __init__(self, workers: int | None = None):
        self._pool = ProcessPoolExecutor(max_workers=workers or os.cpu_count() or 2, initializer=_worker_init)
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

    def close(self) -> None:
        self._pool.shutdown(cancel_futures=True)


class RayJudging(Generic[K]):
    """Judging as Ray tasks of one CPU each, on whichever node has one (the Ray executor's)."""

    def __init__(self, ray: Any):  # the connected ray module (sweep/executors.py:connect_ray)
        self.ray = ray
        self._task = ray.remote(num_cpus=1)(run_job)
        self._pending: list = []

    def submit(self, jobs: Iterable[JudgeJob[K]]) -> None:
        self._pending += [self._task.remote(j) for j in jobs]

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


def judge_many(jobs: Iterable[JudgeJob[K]], workers: int | None = None, max_pending: int = 64) -> Iterator[Judged[K]]:
    """Yield (key, judgement) in completion order; at most max_pending jobs are in flight."""
    pool: JudgePool[K] = JudgePool(workers)
    try:
        for job in jobs:
            pool.submit([job])
            if pool.pending >= max_pending:
                yield from pool.collect(block=True)
        while pool.pending:
            yield from pool.collect(block=True)
    finally:
        pool.close()
