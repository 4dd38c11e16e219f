"""Batch judging over a process pool (both cores by default), streaming results as they finish.

The worker is a plain function of one JudgeJob, so the jobs stage can hand the same jobs to Ray.
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from backend.grading.judge import JudgeTest, Program, SpecialJudge, format_failure, judge
from backend.grading.limits import JudgeLimits
from backend.records import Judgement

# A job's key, returned with its result: a sweep's SampleKey (what the store files the result under),
# or whatever names a program in the caller's own bookkeeping (an RL batch position, a calibration role).
K = TypeVar("K", bound=Hashable)


@dataclass
class JudgeJob(Generic[K]):
    key: K
    program: Program | None  # None: no program could be extracted (format failure)
    tests: list[JudgeTest]
    limits: JudgeLimits = field(default_factory=JudgeLimits)
    checker: str | SpecialJudge = "exact"
    func_name: str | None = None
    run_all: bool = False
    backend: str = "bwrap"
    format_reason: str = ""


def run_job(job: JudgeJob[K]) -> tuple[K, Judgement]:
    if job.program is None:
        return job.key, format_failure(job.format_reason or "no program extracted")
    result = judge(
        job.program,
        job.tests,
        job.limits,
        job.checker,
        backend=job.backend,
        run_all=job.run_all,
        func_name=job.func_name,
    )
    return job.key, result


def _worker_init() -> None:
    # multiprocessing workers leave through os._exit, which skips atexit: free containers here.
    from multiprocessing import util

    from backend.sandbox import docker_backend

    util.Finalize(None, docker_backend.remove_containers, exitpriority=10)


class JudgePool:
    """Judging on a process pool over all cores (the jobs' local executor and judge_many): submit
    JudgeJobs, collect (key, result) pairs as they finish."""

    def __init__(self, workers: int | None = None):
        self._pool = ProcessPoolExecutor(max_workers=workers or os.cpu_count() or 2, initializer=_worker_init)
        self._pending: set = set()

    def submit(self, jobs: Iterable[JudgeJob[Hashable]]) -> None:
        self._pending |= {self._pool.submit(run_job, j) for j in jobs}

    def collect(self, block: bool = False) -> list[tuple[Hashable, Judgement]]:
        """What has finished; with block, wait for at least one (when any is pending)."""
        if not self._pending:
            return []
        done, self._pending = wait(self._pending, timeout=None if block else 0, return_when=FIRST_COMPLETED)
        return [f.result() for f in done]

    @property
    def pending(self) -> int:
        return len(self._pending)

    def close(self) -> None:
        self._pool.shutdown(cancel_futures=True)


def judge_many(
    jobs: Iterable[JudgeJob[K]], workers: int | None = None, max_pending: int = 64
) -> Iterator[tuple[K, Judgement]]:
    """Yield (key, result) in completion order; at most max_pending jobs are in flight."""
    pool = JudgePool(workers)
    try:
        for job in jobs:
            pool.submit([job])
            if pool.pending >= max_pending:
                yield from pool.collect(block=True)
        while pool.pending:
            yield from pool.collect(block=True)
    finally:
        pool.close()
