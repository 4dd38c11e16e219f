"""Batch judging over a process pool (both cores by default), streaming results as they finish.

The worker is a plain function of one JudgeJob, so the jobs stage can hand the same jobs to Ray.
A pool that lives long (an RL rank's, kept across GRPO steps) starts its workers with `spawn`:
a fresh interpreter each, never a fork of a process that holds CUDA, NCCL or threads.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Hashable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from backend.grading.judge import JudgeResult, JudgeTest, Program, SpecialJudge, judge
from backend.grading.limits import JudgeLimits

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


def run_job(job: JudgeJob[K]) -> tuple[K, JudgeResult]:
    if job.program is None:
        from backend.grading.judge import format_failure

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


def rank_workers(cpus: int | None = None, ranks: int | None = None) -> int:
    """One rank's share of this node's cores: cpu_count // ranks, at least 1. The ranks are this
    node's training processes (LOCAL_WORLD_SIZE, which accelerate and torchrun set; 1 alone)."""
    cpus = cpus or os.cpu_count() or 1
    ranks = ranks or int(os.environ.get("LOCAL_WORLD_SIZE") or 1)
    return max(1, cpus // max(1, ranks))


class JudgePool:
    """Judging on a process pool over all cores (the jobs' local executor and judge_many): submit
    JudgeJobs, collect (key, result) pairs as they finish. `start_method` None is the platform's
    default (fork on Linux); "spawn" or "forkserver" for a process that holds CUDA or threads."""

    def __init__(self, workers: int | None = None, start_method: str | None = None):
        context = multiprocessing.get_context(start_method) if start_method else None
        self.workers = workers or os.cpu_count() or 2
        self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=context, initializer=_worker_init)
        self._pending: set = set()

    def submit(self, jobs: Iterable[JudgeJob[Hashable]]) -> None:
        self._pending |= {self._pool.submit(run_job, j) for j in jobs}

    def collect(self, block: bool = False) -> list[tuple[Hashable, JudgeResult]]:
        """What has finished; with block, wait for at least one (when any is pending)."""
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


def judge_many(
    jobs: Iterable[JudgeJob[K]], workers: int | None = None, max_pending: int = 64, pool: JudgePool | None = None
) -> Iterator[tuple[K, JudgeResult]]:
    """Yield (key, result) in completion order; at most max_pending jobs are in flight. On a
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
