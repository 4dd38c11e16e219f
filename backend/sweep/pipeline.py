"""The sweep pipeline: merge → rollout → judge → store, for every α (or every checkpoint of an eval).

Resumable by construction: each stage computes what is missing (merged folders not yet in the
cache, problems without all their samples, samples without an evaluation) and does only that.
Judging of one point runs in the executor's pool while the next point is being generated. The
executor decides where points are sampled (backend/sweep/executors.py, backend/sweep/pool.py).

A sample's judging, typed end to end: its problem's JudgeInputs and the sample make a
JudgeJob[SampleKey]; the executor's `judging` (grading/pool.py) returns Judged(key, judgement);
the judgement, filed under the key (Evaluation.of), is what the store writes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from backend.alpha import AlphaSwitch
from backend.grading.judge import JudgeSetup, JudgeTest, Program, judge_setup
from backend.grading.pool import JudgeJob, Judging
from backend.hub import checkpoint_label
from backend.merge import checkpoints
from backend.merge.cache import pinned_sweep, register_live_switch, register_merged
from backend.merge.checkpoints import ensure_registered
from backend.merge.spec import Merge
from backend.records import Evaluation, Job, Problem, Sample, SampleKey, Test
from backend.rollout.prompts import resolve_prompt_format
from backend.rollout.run import Batch, batch_sampling, conversations, missing_batches, select_problems, store_batch
from backend.rollout.settings import SettingLimits
from backend.rollout.spec import Episode
from backend.store import Store
from backend.sweep.executors import Executor, LocalExecutor, Point, engine_options
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


@dataclass(frozen=True)
class JudgeInputs:
    """What judging one problem's samples needs, read from the store once per job: its tests and
    how it is judged (limits, checker, method)."""

    tests: list[JudgeTest]
    setup: JudgeSetup

    @classmethod
    def of(cls, store: Store, problem: Problem, spec: SweepSpec | EvalSpec) -> JudgeInputs:
        tests = [JudgeTest(t.input, t.output) for t in store.select(Test, {"problem_id": problem.id})]
        return cls(tests, judge_setup(problem, spec.time_limit_s, spec.memory_limit_mb))

    def job(self, sample: Sample, backend: str) -> JudgeJob[SampleKey]:
        """The sample's program judged (no program: a format failure, for its extraction's reason)."""
        key = SampleKey(sample.checkpoint_id, sample.problem_id, sample.sample_idx)
        program = Program(sample.code) if sample.code else None
        return JudgeJob.of(
            key, program, self.tests, self.setup, backend=backend, format_reason=sample.extract_error or ""
        )


def merge_specs(spec: SweepSpec) -> list[Merge]:
    """One Merge per α; a live switch's in the endpoints' dtype (it writes no folder)."""
    dtype = "auto" if spec.live_switch else spec.merge_dtype
    return [Merge.at_alpha(spec.low, spec.high, a, dtype=dtype) for a in spec.alphas]


def sweep_points(store: Store, spec: SweepSpec, progress: Progress, merge) -> list[Point]:
    """merge(specs) → folders: the executor's (in this process, or one Ray task per α)."""
    specs = merge_specs(spec)
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


def make_executor(spec: SweepSpec | EvalSpec) -> Executor:
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
            spec.backend,
        )
    return LocalExecutor(spec.engine, switch_endpoints=switch_endpoints, **engine_options(spec))


def run_pipeline(store: Store, job_id: str, experiment_id: str, spec: SweepSpec | EvalSpec) -> dict:
    progress = Progress(store, job_id)
    problems = select_problems(store, spec)
    prompt_format = resolve_prompt_format(spec.prompt_format, job_folders(spec))
    judge_inputs = {p.id: JudgeInputs.of(store, p, spec) for p in problems}
    on_disk = merge_specs(spec) if isinstance(spec, SweepSpec) and not spec.live_switch else []
    with pinned_sweep(job_id, on_disk, getattr(spec, "keep_merges", "budget")):  # room checked before any merge
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
            work = Work(store, executor.judging, experiment_id, problems, spec, judge_inputs, progress, prompt_format)
            executor.rollout_points(points, work)
            while executor.judging.pending:
                work.drain(block=True)
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
    """What an executor needs of the pipeline (executors.PointWork): what a point still lacks, and
    where results go. The executor calls stored() with each batch as it arrives, in the driver, the
    only writer; a finished point's samples go to `judging`, whose results drain() stores."""

    store: Store
    judging: Judging[SampleKey]
    exp: str
    problems: list[Problem]
    spec: SweepSpec | EvalSpec
    judge_inputs: dict[str, JudgeInputs]  # by problem id
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

    def stored(self, point: Point, batch: Batch, episodes: list[list[Episode]]) -> None:
        stored = store_batch(self.store, self.exp, point.checkpoint_id, batch, episodes, self.spec.setting)
        self.progress.advance("rollout", stored)

    def finished(self, point: Point) -> None:
        """The point's samples not judged yet go to judging."""
        judged = self.store.evaluation_keys(self.exp, point.checkpoint_id)
        samples = [
            s
            for s in self.store.select(Sample, {"experiment_id": self.exp, "checkpoint_id": point.checkpoint_id})
            if s.problem_id in self.judge_inputs
        ]
        todo = [s for s in samples if (s.problem_id, s.sample_idx) not in judged]
        self.progress.reuse("judge", len(samples) - len(todo))
        self.judging.submit(self.judge_inputs[s.problem_id].job(s, self.spec.backend) for s in todo)
        self.idle()

    def idle(self) -> None:
        self.drain(block=False)

    def drain(self, block: bool) -> None:
        """Store the judged samples judging has finished, each filed under its sample's key."""
        done = self.judging.collect(block=block)
        if done:
            self.store.put([Evaluation.of(self.exp, d.key, d.judgement) for d in done], replace=False)
            self.progress.advance("judge", len(done))

    def actor(self, name: str, **fields) -> None:
        self.progress.actor(name, **fields)
