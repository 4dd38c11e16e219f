"""The Ray executor: an engine pool over the cluster's GPUs, merges and judging as CPU tasks.

- One engine actor per `tensor_parallel_size` GPUs (all of the cluster's, or `gpus` of them), never
  more actors than points. On a cluster without GPUs: one CPU actor.
- A unit of work is a point (an α, or a checkpoint of an eval). A free actor takes the next point
  and samples its missing batches one call at a time; the driver stores each batch as it arrives
  (it stays the only writer) and the actor keeps its engine, and a live switch's endpoints, loaded
  for its next point.
- An actor that dies (killed, node pre-empted) loses only its batch in flight, which was never
  stored: its point goes back to the queue and the next free actor samples what the store still
  lacks. So nothing is stored twice and nothing is lost.
- A disk sweep's merges run as one Ray task per α, each writing into the merge cache through its
  atomic rename (the cache folder must be on a filesystem every node sees).
- Judging is one Ray task per sample. A problem's tests (LiveCodeBench's: ~60, up to megabytes)
  go into Ray's object store once and every judge task of that problem names them by reference,
  rather than each task carrying its own copy (n × α copies per problem).
"""

from __future__ import annotations

import collections
import os
import time
from pathlib import Path
from typing import Any

from backend.errors import UserError
from backend.grading.pool import Judging, RayJudging
from backend.merge.cache import MergeCache
from backend.merge.spec import Merge
from backend.records import SampleKey
from backend.rollout.run import Batch
from backend.sweep.executors import Engines, Point, PointWork, connect_ray
from backend.sweep.preflight import preflight
from backend.sweep.ray_errors import cause
from backend.sweep.ray_join import chosen_address

ATTEMPTS = 3  # a point whose actor died this many times fails the job: the fault is likely the point's


class EngineActor:
    """One engine in its own process, on its own GPU(s); loaded once, kept across points."""

    def __init__(self, engine_name: str, engine_kw: dict):
        self.engines = Engines(engine_name, **engine_kw)

    def where(self) -> dict:
        import ray

        return {"node": ray.util.get_node_ip_address(), "gpus": [str(g) for g in ray.get_gpu_ids()], "pid": os.getpid()}

    def rollout(self, point: Point, conversations: list[list[dict]], request: dict) -> tuple[list, dict]:
        began = time.time()
        episodes = self.engines.rollout(point.path, conversations, alpha_switch=point.alpha_switch, **request)
        return episodes, {"began": began, "ended": time.time()}

    def close(self) -> None:
        self.engines.close()


def _merge_task(spec: Merge, cache_root: str) -> str:
    return str(MergeCache(cache_root).get([spec], progress=False)[0])


class RayExecutor:
    """Sampling on the cluster's engine actors, merges and judging as its CPU tasks."""

    judging: Judging[SampleKey]

    def __init__(
        self,
        engine_name: str = "auto",
        address: str | None = None,
        gpus: int | None = None,
        tensor_parallel_size: int = 1,
        engine_kw: dict | None = None,
        folders: list[str] = (),
        sandbox: str | None = None,
    ):
        self.ray = connect_ray(address)
        if chosen_address(address)[0]:  # a user's cluster: what each node can do, and the folders it sees
            preflight(self.ray, list(folders), [str(MergeCache().root)], sandbox, engine_name)
        self.engine_name, self.engine_kw = engine_name, engine_kw or {}
        self.per_actor, self.most_actors = self._plan(gpus, tensor_parallel_size)
        self.judging = RayJudging(self.ray)
        self.actors: dict[str, Any] = {}
        self._where: dict[Any, str] = {}  # an actor's where() call → its name, until it answers
        self._started = 0

    def _plan(self, gpus: int | None, tp: int) -> tuple[dict, int]:
        """Resources of one actor and how many actors at most."""
        have = int(self.ray.cluster_resources().get("GPU", 0))
        if have == 0:
            if gpus or tp > 1:
                raise UserError(
                    "the Ray cluster has no GPUs; leave gpus unset and tensor_parallel_size at 1 to sample on a CPU"
                )
            return {"num_cpus": 1}, 1
        use = gpus or have
        if use > have:
            raise UserError(f"gpus={use} but the Ray cluster has {have} GPU(s)")
        if use < tp:
            raise UserError(f"tensor_parallel_size={tp} needs {tp} GPUs per engine; the pool has {use}")
        return {"num_gpus": tp, "num_cpus": 0}, use // tp

    def merge(self, specs: list[Merge]) -> list[Path]:
        """One task per α; the cache's atomic rename makes a folder appear whole or not at all."""
        root = str(MergeCache().root)
        task = self.ray.remote(num_cpus=1)(_merge_task)
        return [Path(p) for p in self._get([task.remote(s, root) for s in specs])]

    def rollout_points(self, points: list[Point], work: PointWork) -> None:
        """Every point's missing samples, spread over the pool; returns when all are stored."""
        if not points:
            return
        for _ in range(min(self.most_actors, len(points))):
            self._start_actor(work)
        queue, free = collections.deque(points), list(self.actors)
        in_flight: dict[Any, tuple[str, Point, Batch, list[Batch]]] = {}  # ref → (actor, point, batch, later ones)
        failures: collections.Counter = collections.Counter()
        while queue or in_flight:
            while free and queue:
                point = queue.popleft()
                batches = work.todo(point)
                if not batches:
                    work.finished(point)
                    continue
                name = free.pop(0)
                work.actor(name, point=point.label, state="sampling")
                self._submit(in_flight, name, point, batches, work)
            if not in_flight:
                continue
            ready, _ = self.ray.wait(list(in_flight), num_returns=1, timeout=1.0)
            self._located(work)
            work.idle()
            for ref in ready:
                name, point, batch, later = in_flight.pop(ref)
                try:
                    episodes, times = self._get(ref)
                except self._died as exc:
                    failures[point.checkpoint_id] += 1
                    if failures[point.checkpoint_id] >= ATTEMPTS:
                        raise RuntimeError(
                            f"{point.label}: its engine actor died {ATTEMPTS} times; last: {cause(exc)}"
                        ) from exc
                    self._lost(name, work, free, cause(exc))
                    queue.appendleft(point)  # the next free actor samples what the store still lacks
                    continue
                work.stored(point, batch, episodes)
                work.actor(name, batch_samples=sum(map(len, episodes)), **times)
                if later:
                    self._submit(in_flight, name, point, later, work)
                else:
                    work.finished(point)
                    work.actor(name, state="idle")
                    free.append(name)

    def _get(self, refs):
        """ray.get, with a user's mistake raised as its own one line (not Ray's wrapped traceback),
        and any other failure of the remote code as its cause's line (the traceback follows in the log)."""
        try:
            return self.ray.get(refs)
        except self.ray.exceptions.RayTaskError as exc:
            if isinstance(exc.cause, UserError):
                raise exc.cause from None
            if isinstance(exc, self._died):
                raise
            raise RuntimeError(cause(exc)) from exc

    @property
    def _died(self) -> tuple[type[Exception], ...]:
        errors = self.ray.exceptions
        return (errors.RayActorError, errors.ActorUnavailableError)

    def _start_actor(self, work: PointWork) -> str:
        name = f"engine-{self._started}"
        self._started += 1
        actor = (
            self.ray.remote(**self.per_actor)(EngineActor)
            .options(max_restarts=0)
            .remote(self.engine_name, self.engine_kw)
        )
        self.actors[name] = actor
        self._where[actor.where.remote()] = name
        work.actor(name, state="starting")
        return name

    def _located(self, work: PointWork) -> None:
        """Record where each new actor runs (node, GPUs, pid) as soon as it answers."""
        if not self._where:
            return
        ready, _ = self.ray.wait(list(self._where), num_returns=len(self._where), timeout=0)
        for ref in ready:
            name = self._where.pop(ref)
            try:
                work.actor(name, **self.ray.get(ref))
            except self._died:
                pass  # its rollout call reports the death

    def _lost(self, name: str, work: PointWork, free: list[str], why: str) -> None:
        """Drop a dead actor; start a replacement when the cluster has room for one (a pre-empted
        node's GPUs may be gone), and always when no actor is left."""
        self.ray.kill(self.actors.pop(name), no_restart=True)
        print(f"{name} died: {why}", flush=True)  # the job's log says why, not only that it died
        work.actor(name, state="died", cause=why)
        room = self.ray.available_resources().get("GPU", 0) >= self.per_actor.get("num_gpus", 0)
        if not self.actors or room:
            free.append(self._start_actor(work))

    def _submit(self, in_flight: dict, name: str, point: Point, batches: list[Batch], work: PointWork) -> None:
        batch, later = batches[0], batches[1:]
        ref = self.actors[name].rollout.remote(point, work.conversations(batch), work.request(batch))
        in_flight[ref] = (name, point, batch, later)

    def close(self) -> None:
        """Each engine's device share is released before its actor goes (a vLLM engine holds it
        until its engine core is shut down)."""
        closing = [actor.close.remote() for actor in self.actors.values()]
        try:
            if closing:
                self.ray.wait(closing, num_returns=len(closing), timeout=60)
        finally:
            for actor in self.actors.values():
                self.ray.kill(actor)
            self.actors.clear()
            self.judging.close()
