"""Where a job's work runs, behind one Protocol (`Executor`). The driver process owns the database
either way: executors return results to it and never write.

- local: rollouts in the driver (the model stays loaded), judging in a process pool over all cores
         (grading/pool.py's JudgePool).
- ray:   an engine pool (backend/sweep/pool.py): one engine actor per GPU, α points handed to
         whichever actor is free; merges and judging as CPU tasks (grading/pool.py's RayJudging).
         `ray_address` (else RAY_ADDRESS) joins a running cluster; neither starts a local one that
         listens on 127.0.0.1 only.

Both run a job's points (`Point`, the typed work item of sampling) through
`rollout_points(points, work)`: `work` (`PointWork`, the pipeline's) says what each point still
lacks and stores what comes back, so resume is the same computation either way. Judging goes
through the executor's `judging` (grading/pool.py's Judging Protocol): typed JudgeJobs in, the
judged samples (Judged) out.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from backend.alpha import AlphaSwitch, PointKind, alpha_kind, alpha_label
from backend.grading.pool import JudgePool, Judging
from backend.merge.cache import MergeCache
from backend.merge.spec import Merge
from backend.records import SampleKey
from backend.rollout.engines import make_engine
from backend.rollout.run import Batch
from backend.rollout.settings import SettingLimits, run_episodes
from backend.rollout.spec import Episode, SamplingSpec


@dataclass
class Point:
    """One checkpoint to sample, an executor's unit of work: a merged α (`Point.merged`), or an
    existing checkpoint of an eval."""

    checkpoint_id: str
    path: str
    alpha_switch: AlphaSwitch | None = None  # sampled by switching the engine's weights, not from `path`
    label: str = ""
    index: int = 0  # its place among the job's points: with disjoint seeds, its block of seeds
    alpha: float | None = None  # None: an eval's checkpoint, no α

    @classmethod
    def merged(cls, checkpoint_id: str, path: str, alpha: float, switch: AlphaSwitch | None = None) -> Point:
        return cls(checkpoint_id, path, switch, alpha_label(alpha), alpha=alpha)

    @property
    def kind(self) -> PointKind:
        return alpha_kind(self.alpha)


class PointWork(Protocol):
    """What an executor asks of the pipeline (sweep/pipeline.py's Work) while it samples points."""

    def todo(self, point: Point) -> list[Batch]:
        """The point's batches still missing from the store."""
        ...

    def conversations(self, batch: Batch) -> list[list[dict]]: ...

    def request(self, batch: Batch) -> dict:
        """The rest of the engine call for one batch (Engines.rollout's keywords)."""
        ...

    def stored(self, point: Point, batch: Batch, episodes: list[list[Episode]]) -> None:
        """A batch's episodes, handed back to the driver to store."""
        ...

    def finished(self, point: Point) -> None:
        """Every batch of the point is stored: its samples go to judging."""
        ...

    def idle(self) -> None:
        """Between calls: store what judging has finished."""
        ...

    def actor(self, name: str, **fields) -> None:
        """An engine actor's state (where it runs, what it samples), for the job's progress."""
        ...


class Executor(Protocol):
    """Where a job's points are merged and sampled and its samples judged: LocalExecutor (this
    process) or RayExecutor (sweep/pool.py)."""

    judging: Judging[SampleKey]

    def merge(self, specs: list[Merge]) -> list[Path]:
        """The merged folder of each spec, made where missing."""
        ...

    def rollout_points(self, points: list[Point], work: PointWork) -> None:
        """Every point's missing samples, stored through `work`; returns when all are."""
        ...

    def close(self) -> None: ...


class Engines:
    """One loaded engine at a time. For a live α switch the endpoint θ_low stays loaded and its
    weights are rewritten in place (backend/merge/live.py) instead of loading a merged folder.

    The old engine is closed before the next is built: a vLLM worker starts only when the device
    has gpu_memory_utilization × total free (vLLM 0.31.0 v1/worker/utils.py:539-558), and an
    engine holds its share until its engine core is shut down."""

    def __init__(self, engine_name: str, switch_endpoints: str = "device", **engine_kw):
        self.engine_name, self.switch_endpoints, self.engine_kw = engine_name, switch_endpoints, engine_kw
        self.engine, self.path, self.mode, self.switch = None, None, None, None

    def get(self, checkpoint: str, alpha_switch: tuple[str, str, float] | None = None):
        target = alpha_switch[0] if alpha_switch else checkpoint
        mode = tuple(alpha_switch[:2]) if alpha_switch else None
        if self.engine is None or self.path != target or self.mode != mode:
            self.close()
            self.engine = make_engine(
                self.engine_name, target, alpha_switch=mode, switch_endpoints=self.switch_endpoints, **self.engine_kw
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


def engine_options(spec) -> dict:
    """Engine keywords a job spec sets (only those that differ from the engine's own default)."""
    if spec.engine == "openai":  # the server's options, and what its command template may name
        from backend.rollout.server_options import ServerOptions

        return {"options": ServerOptions.of(spec), "seed": spec.seed, "tensor_parallel_size": spec.tensor_parallel_size}
    return {"tensor_parallel_size": spec.tensor_parallel_size} if spec.tensor_parallel_size > 1 else {}


class LocalExecutor:
    """Sampling in this process, one point after another; judging on a local process pool."""

    judging: Judging[SampleKey]

    def __init__(
        self, engine_name: str = "auto", judge_workers: int | None = None, switch_endpoints: str = "device", **engine_kw
    ):
        self.engines = Engines(engine_name, switch_endpoints, **engine_kw)
        self.judging = JudgePool(judge_workers)

    def merge(self, specs: list[Merge]) -> list[Path]:
        return MergeCache().get(specs, progress=False)  # one pass over the inputs for every missing α

    def rollout_points(self, points: list[Point], work: PointWork) -> None:
        """One point after another in this process; the model stays loaded between points."""
        for point in points:
            for batch in work.todo(point):
                episodes = self.engines.rollout(
                    point.path, work.conversations(batch), alpha_switch=point.alpha_switch, **work.request(batch)
                )
                work.stored(point, batch, episodes)
            work.finished(point)

    def close(self) -> None:
        try:
            self.engines.close()
        finally:
            self.judging.close()


def connect_ray(address: str | None, **init_kw):
    """The one Ray start: join `address` (auto | HOST:PORT | ray://HOST:PORT), else RAY_ADDRESS
    when exported (as ray.init reads it), else start a local cluster on every core that only this
    machine can reach. Ray has no authentication (whoever reaches its ports runs code
    on it), and by default a new cluster listens on the machine's network interface; with Ray's
    multi-node mode off it binds every port to 127.0.0.1. `RAY_OVERRIDE_RESOURCES` (Ray's own
    variable) may declare resources, e.g. fake GPUs for tests."""
    import ray

    if ray.is_initialized():
        return ray
    from backend.sweep.ray_join import chosen_address, join

    address, source = chosen_address(address)
    if address:  # a running cluster, joined under Ray's address and token rules (ray_join.py)
        return join(ray, address, source, **init_kw)
    _only_leased_gpus()
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # the processes Ray starts read it too
    # Ray starts its workers at niceness 15: on a busy machine its judge tasks, and the sandboxes
    # they start, would get a fraction of the CPU the local executor's pool gets (bench/judge_scale.py)
    os.environ.setdefault("RAY_worker_niceness", "0")
    ray._private.ray_constants.ENABLE_RAY_CLUSTER = False  # read at import, which may have happened
    for attempt in (1, 2, 3):
        try:
            ray.init(
                address="local",  # a new cluster, never one a `ray start` of this machine recorded
                num_cpus=None if "RAY_OVERRIDE_RESOURCES" in os.environ else os.cpu_count(),
                _node_ip_address="127.0.0.1",
                include_dashboard=False,
                dashboard_host="127.0.0.1",
                log_to_driver=True,  # the tasks' and actors' output (an engine's root cause) in the job's log
                **init_kw,
            )
            return ray
        except Exception as exc:  # Ray waits a fixed 30 s for its raylet, which a busy machine can miss
            if "timed out during startup" not in str(exc) or attempt == 3:
                raise
            ray.shutdown()
    return ray


def _only_leased_gpus() -> None:
    """A local cluster offers only the GPUs this process may use, the job's lease
    (CUDA_VISIBLE_DEVICES, backend/gpus.py): Ray counts those itself and hands their names to its
    actors; a GPU count declared in RAY_OVERRIDE_RESOURCES (Ray's own variable) is cut to them,
    as Ray refuses more GPUs than CUDA_VISIBLE_DEVICES lists."""
    listed, declared = os.environ.get("CUDA_VISIBLE_DEVICES"), os.environ.get("RAY_OVERRIDE_RESOURCES")
    if listed is None or not declared:
        return
    resources = json.loads(declared)
    if "GPU" in resources:
        resources["GPU"] = min(resources["GPU"], len([d for d in listed.split(",") if d.strip()]))
        os.environ["RAY_OVERRIDE_RESOURCES"] = json.dumps(resources)
