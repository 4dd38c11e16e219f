"""The sweep pipeline: merge → rollout → judge → store, for every α (or every checkpoint of an eval).

Resumable by construction: each stage computes what is missing (merged folders not yet in the
cache, problems without all their samples, samples without an evaluation) and does only that.
Judging of one point runs in the executor's pool while the next point is being generated. The
executor decides where points are sampled (backend/sweep/executors.py, backend/sweep/pool.py).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from backend.alpha import AlphaSwitch, PointKind, alpha_kind, alpha_label
from backend.grading.judge import JudgeTest, Program, judge_setup
from backend.grading.pool import JudgeJob
from backend.hub import checkpoint_label
from backend.merge import checkpoints
from backend.merge.cache import register_live_switch, register_merged
from backend.merge.checkpoints import ensure_registered
from backend.merge.spec import Merge
from backend.records import Evaluation, Job, Problem, Sample, SampleKey, Test
from backend.rollout.prompts import resolve_prompt_format
from backend.rollout.run import Batch, batch_sampling, conversations, missing_batches, select_problems, store_batch
from backend.rollout.settings import SettingLimits
from backend.store import Store
from backend.sweep.executors import LocalExecutor, engine_options
from backend.sweep.spec import EvalSpec, SweepSpec, job_folders, labelled


class Progress:
    """Per-stage done/total, throughput and ETA in the job row, written at most once a second."""

    def __init__(self, store: Store, job_id: str):
        self.store, self.job_id = store, job_id
        self.stages: dict[str, dict] = {}
        self.stage: str | None = None
        self.actors: dict[str, dict] = {}  # engine actors of the Ray pool: where they run, what they do
        self._last = 0.0

    def set_total(self, stage: str, total: int) -> None:
        self.stages.setdefault(stage, {"done": 0, "started": time.time()})["total"] = total
        self.flush(stage, force=True)

    def advance(self, stage: str, n: int = 1) -> None:
        self.stages[stage]["done"] += n
        self.flush(stage)

    def reuse(self, stage: str, n: int) -> None:
        """Work a resumed job finds already done: it counts as done, but not toward the rate, so
        the ETA is the work still to do at the speed of this run."""
        self.stages[stage]["reused"] = self.stages[stage].get("reused", 0) + n
        self.reached(stage, self.stages[stage]["done"] + n)

    def reached(self, stage: str, done: int) -> None:
        self.stages[stage]["done"] = done
        self.flush(stage, force=True)

    def actor(
        self, name: str, batch_samples: int = 0, began: float | None = None, ended: float | None = None, **fields
    ) -> None:
        """An engine actor's node, GPUs, state and point; its rate is samples per second since its first call."""
        a = self.actors.setdefault(name, {"samples": 0, "points": 0})
        a.update(fields)
        if fields.get("state") == "idle":
            a["points"] += 1
        if began is not None:
            a.setdefault("began", began)
            a["ended"], a["samples"] = ended, a["samples"] + batch_samples
            a["rate"] = round(a["samples"] / max(ended - a["began"], 1e-6), 3)
        self.flush(self.stage or "rollout", force=True)

    def flush(self, stage: str, force: bool = False) -> None:
        now = time.time()
        if not force and now - self._last < 1.0:
            return
        self._last = now
        self.stage = stage
        out: dict = {"actors": self.actors} if self.actors else {}
        for name, s in self.stages.items():
            if s.get("total") and s["done"] >= s["total"]:
                s.setdefault("ended", now)  # a finished stage's rate stops where it ended
            rate = (s["done"] - s.get("reused", 0)) / max(s.get("ended", now) - s["started"], 1e-6)
            left = s.get("total", 0) - s["done"]
            out[name] = {
                "done": s["done"],
                "total": s.get("total", 0),
                "rate": round(rate, 3),
                "eta_s": round(left / rate, 1) if rate > 0 else None,
            }
        self.store.update(Job, (self.job_id,), stage=stage, progress=out)


@dataclass
class Point:
    """One checkpoint to evaluate: a merged α (`Point.merged`), or an existing checkpoint of an eval."""

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


def sweep_points(store: Store, spec: SweepSpec, progress: Progress, merge) -> list[Point]:
    """merge(specs) → folders: the executor's (in this process, or one Ray task per α)."""
    specs = [Merge.at_alpha(spec.low, spec.high, a) for a in spec.alphas]
    progress.set_total("merge", len(specs))
    if spec.live_switch:  # live α switch: no folders, the same ids a disk merge would get
        points = []
        for s in specs:
            row = register_live_switch(store, spec.low, spec.high, s)
            switch = AlphaSwitch(spec.low, spec.high, s.alpha)
            points.append(Point.merged(row.id, spec.low, s.alpha, switch))
        progress.advance("merge", len(specs))
        return points
    folders = merge(specs)
    progress.advance("merge", len(specs))
    return [Point.merged(register_merged(store, f, s).id, str(f), s.alpha) for f, s in zip(folders, specs, strict=True)]


def eval_points(store: Store, entries: list[str]) -> list[Point]:
    """Existing checkpoints (FOLDER or LABEL=FOLDER): registered, a given label stored as theirs."""
    points = []
    for entry in entries:
        path, label = labelled(entry)
        row = checkpoints.relabel(store, ensure_registered(store, path, label=label), label)
        points.append(Point(row.id, path, label=label or checkpoint_label(path)))
    return points


def make_executor(spec: SweepSpec | EvalSpec):
    """Local, or the Ray engine pool (imported only when asked for: it imports Ray)."""
    switch_endpoints = getattr(spec, "switch_endpoints", "device")
    if spec.executor == "ray":
        from backend.sweep.pool import RayExecutor

        return RayExecutor(
            spec.engine,
            spec.ray_address,
            spec.gpus,
            spec.tensor_parallel_size,
            {"switch_endpoints": switch_endpoints, **engine_options(spec)},
            job_folders(spec),
        )
    return LocalExecutor(spec.engine, switch_endpoints=switch_endpoints, **engine_options(spec))


def run_pipeline(store: Store, job_id: str, experiment_id: str, spec: SweepSpec | EvalSpec) -> dict:
    progress = Progress(store, job_id)
    problems = select_problems(store, spec)
    prompt_format = resolve_prompt_format(spec.prompt_format, job_folders(spec))
    judge_inputs = {p.id: _judge_inputs(store, p, spec) for p in problems}
    executor = make_executor(spec)
    try:
        if isinstance(spec, SweepSpec):
            points = sweep_points(store, spec, progress, executor.merge) + eval_points(store, spec.independent)
        else:
            points = eval_points(store, spec.checkpoints)
        points = [replace(p, index=i) for i, p in enumerate(points)]
        progress.set_total("rollout", len(points) * len(problems) * spec.n)
        progress.set_total("judge", len(points) * len(problems) * spec.n)
        for point in points:
            done = store.sample_keys(experiment_id, point.checkpoint_id)
            progress.reuse("rollout", sum(1 for p in problems for i in range(spec.n) if (p.id, i) in done))
        executor.rollout_points(
            points, Work(store, executor, experiment_id, problems, spec, judge_inputs, progress, prompt_format)
        )
        while executor.pending:
            _drain(store, executor, experiment_id, progress, block=True)
        progress.flush("judge", force=True)
    finally:
        executor.close()
    return {
        "points": len(points),
        "problems": len(problems),
        "samples": store.count(Sample, {"experiment_id": experiment_id}),
        "evaluations": store.count(Evaluation, {"experiment_id": experiment_id}),
    }


@dataclass
class Work:
    """What an executor needs of the pipeline: what a point still lacks, and where results go. The
    executor calls stored() with each batch as it arrives, in the driver, the only writer."""

    store: Store
    executor: object
    exp: str
    problems: list[Problem]
    spec: SweepSpec | EvalSpec
    judge_inputs: dict
    progress: Progress
    prompt_format: str

    def request(self, batch: Batch) -> dict:
        """The rest of an engine call for one batch: its sampling (seeds from the batch's place),
        setting, limits, sandbox and prompt format."""
        return {
            "setting": self.spec.setting,
            "sampling": batch_sampling(self.spec.sampling(), batch),
            "limits": SettingLimits(),
            "backend": self.spec.backend,
            "prompt_format": self.prompt_format,
        }

    def todo(self, point: Point) -> list[Batch]:
        """The point's missing batches; checkpoint c takes seeds S + c·P·n + i·n + k (P problems)
        unless the spec asks for common seeds (every checkpoint S + i·n + k, a paired design)."""
        block = 0 if self.spec.common_seeds else point.index * len(self.problems)
        return missing_batches(self.store, self.exp, point.checkpoint_id, self.problems, self.spec.n, block)

    def conversations(self, batch: Batch) -> list[list[dict]]:
        return conversations(self.store, batch, self.spec.setting)

    def stored(self, point: Point, batch: Batch, episodes) -> None:
        stored = store_batch(self.store, self.exp, point.checkpoint_id, batch, episodes, self.spec.setting)
        self.progress.advance("rollout", stored)

    def finished(self, point: Point) -> None:
        _queue_judging(self.store, self.executor, self.exp, point, self.judge_inputs, self.spec, self.progress)
        self.idle()

    def idle(self) -> None:
        _drain(self.store, self.executor, self.exp, self.progress, block=False)

    def actor(self, name: str, **fields) -> None:
        self.progress.actor(name, **fields)


def _queue_judging(store, executor, exp, point, judge_inputs, spec, progress) -> None:
    judged = store.evaluation_keys(exp, point.checkpoint_id)
    samples = [
        s
        for s in store.select(Sample, {"experiment_id": exp, "checkpoint_id": point.checkpoint_id})
        if s.problem_id in judge_inputs
    ]
    todo = [s for s in samples if (s.problem_id, s.sample_idx) not in judged]
    progress.reuse("judge", len(samples) - len(todo))
    executor.submit_judging([judge_job(s, judge_inputs[s.problem_id], spec.backend) for s in todo])


def judge_job(s: Sample, inputs: tuple, backend: str) -> JudgeJob:
    """A stored sample's judge job (inputs: _judge_inputs of its problem); no code is its format failure."""
    tests, limits, checker, func = inputs
    program = Program(s.code) if s.code else None
    key = SampleKey(s.checkpoint_id, s.problem_id, s.sample_idx)
    return JudgeJob(key, program, tests, limits, checker, func, backend=backend, format_reason=s.extract_error or "")


def _drain(store, executor, exp, progress, block: bool) -> None:
    results = executor.collect(block=block)
    if results:
        store.put([r.evaluation(exp, key) for key, r in results], replace=False)
        progress.advance("judge", len(results))


def _judge_inputs(store: Store, problem: Problem, spec) -> tuple:
    tests = [JudgeTest(t.input, t.output) for t in store.select(Test, {"problem_id": problem.id})]
    setup = judge_setup(problem, spec.time_limit_s, spec.memory_limit_mb)
    return tests, setup.limits, setup.checker, setup.func_name
