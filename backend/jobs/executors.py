"""Where a job's work runs. The driver process owns the database either way: executors return
results to it and never write.

- local: rollouts in the driver (the model stays loaded), judging in a process pool over all cores.
- ray:   rollouts in an actor (num_gpus=1 when the cluster has GPUs, else a CPU actor), judging as
         many CPU tasks; `ray_address` None starts a local cluster, `auto` joins a running one.
"""

from __future__ import annotations

import os
from typing import Any

from backend.rollout.engines import make_engine
from backend.rollout.settings import SettingLimits, run_episodes
from backend.rollout.spec import SamplingSpec
from backend.sandbox.pool import JudgeJob, JudgePool, run_job


class Engines:
    """One loaded engine at a time. For a live α switch the endpoint θ_low stays loaded and its
    weights are rewritten in place (backend/merge/live.py) instead of loading a merged folder.

    The old engine is closed before the next is built: a vLLM worker starts only when the device
    has gpu_memory_utilization × total free (vLLM 0.31.0 v1/worker/utils.py:539-558), and an
    engine holds its share until its engine core is shut down."""

    def __init__(self, engine_name: str, switch_endpoints: str = "device"):
        self.engine_name, self.switch_endpoints = engine_name, switch_endpoints
        self.engine, self.path, self.mode, self.switch = None, None, None, None

    def get(self, checkpoint: str, alpha_switch: tuple[str, str, float] | None = None):
        target = alpha_switch[0] if alpha_switch else checkpoint
        mode = tuple(alpha_switch[:2]) if alpha_switch else None
        if self.engine is None or self.path != target or self.mode != mode:
            self.close()
            self.engine = make_engine(
                self.engine_name, target, alpha_switch=mode, switch_endpoints=self.switch_endpoints
            )
            self.path, self.mode, self.switch = target, mode, None
        if alpha_switch:
            low, high, alpha = alpha_switch
            if self.switch is None:
                self.switch = self.engine.alpha_switch(low, high)  # the engine owns how it switches
            self.switch.set_alpha(alpha)
        return self.engine

    def close(self) -> None:
        if self.engine is not None:
            engine, self.engine, self.path, self.mode, self.switch = self.engine, None, None, None, None
            engine.close()

    def rollout(
        self,
        checkpoint,
        conversations,
        setting,
        sampling: SamplingSpec,
        limits: SettingLimits,
        backend,
        alpha_switch=None,
        prompt_format: str = "chat",
    ):
        engine = self.get(checkpoint, alpha_switch)
        return run_episodes(engine, conversations, setting, sampling, limits, backend, prompt_format)


class LocalExecutor:
    def __init__(self, engine_name: str = "auto", judge_workers: int | None = None, switch_endpoints: str = "device"):
        self.engines = Engines(engine_name, switch_endpoints)
        self.judging = JudgePool(judge_workers)

    def rollout(self, checkpoint, conversations, setting, sampling, limits, backend, alpha_switch=None,
                prompt_format="chat"):  # fmt: skip
        return self.engines.rollout(
            checkpoint, conversations, setting, sampling, limits, backend, alpha_switch, prompt_format
        )

    def submit_judging(self, jobs: list[JudgeJob]) -> None:
        self.judging.submit(jobs)

    def collect(self, block: bool = False) -> list[tuple[Any, Any]]:
        return self.judging.collect(block)

    @property
    def pending(self) -> int:
        return self.judging.pending

    def close(self) -> None:
        try:
            self.engines.close()
        finally:
            self.judging.close()


def connect_ray(address: str | None):
    """The one Ray start: join `address` (auto | HOST:PORT), or start a local cluster on every core."""
    import ray

    if not ray.is_initialized():
        ray.init(address=address, num_cpus=None if address else os.cpu_count(), include_dashboard=False,
                 log_to_driver=False)  # fmt: skip
    return ray


class RayExecutor:
    def __init__(self, engine_name: str = "auto", address: str | None = None, switch_endpoints: str = "device"):
        ray = connect_ray(address)
        self.ray = ray
        gpus = 1 if ray.cluster_resources().get("GPU", 0) >= 1 else 0
        self._actor = ray.remote(num_gpus=gpus, num_cpus=0 if gpus else 1)(Engines).remote(
            engine_name, switch_endpoints
        )
        self._judge = ray.remote(num_cpus=1)(run_job)
        self._pending: list = []

    def rollout(self, checkpoint, conversations, setting, sampling, limits, backend, alpha_switch=None,
                prompt_format="chat"):  # fmt: skip
        return self.ray.get(
            self._actor.rollout.remote(
                checkpoint, conversations, setting, sampling, limits, backend, alpha_switch, prompt_format
            )
        )

    def submit_judging(self, jobs: list[JudgeJob]) -> None:
        self._pending += [self._judge.remote(j) for j in jobs]

    def collect(self, block: bool = False) -> list[tuple[Any, Any]]:
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
        try:
            self.ray.get(self._actor.close.remote())  # the engine's device share, before the actor goes
        finally:
            self.ray.kill(self._actor)


def make_executor(name: str, engine_name: str, ray_address: str | None = None, switch_endpoints: str = "device"):
    if name == "ray":
        return RayExecutor(engine_name, ray_address, switch_endpoints)
    return LocalExecutor(engine_name, switch_endpoints=switch_endpoints)
