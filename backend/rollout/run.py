"""The rollout batch API: sample a checkpoint on a problem set in one setting, store the samples
(with transcripts and extracted code) under one experiment. Re-running the same spec resumes."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tqdm import tqdm

from backend.errors import UserError
from backend.merge.checkpoints import ensure_registered
from backend.records import Experiment, Problem, Sample, Test
from backend.rollout.extract import extract_code
from backend.rollout.prompts import conversation, resolve_prompt_format
from backend.rollout.settings import run_episodes
from backend.rollout.spec import Episode, ProblemChoice, RolloutSpec, SamplingSpec

if TYPE_CHECKING:  # engines import torch, the store duckdb: a rollout imports them when it runs
    from backend.rollout.engines import Engine
    from backend.store import Store

PROBLEMS_PER_BATCH = 8


def select_problems(store: Store, spec: ProblemChoice) -> list[Problem]:
    """The judgeable problems a spec names (any spec with the ProblemChoice fields)."""
    where = {"bench": spec.bench, **({"difficulty": spec.difficulty} if spec.difficulty else {})}
    problems = store.select(Problem, where)
    if spec.problems:
        problems = [p for p in problems if p.id in set(spec.problems)]
        missing = set(spec.problems) - {p.id for p in problems}
        if missing:
            raise UserError(
                f"no problem {sorted(missing)[0]!r} in bench {spec.bench!r}; see `python -m backend problems list`"
            )
    judgeable = [p for p in problems if not p.judge_error]  # unjudgeable ones were reported at import
    if problems and not judgeable:
        raise UserError(f"every matching problem is unjudgeable ({problems[0].id}: {problems[0].judge_error})")
    if not judgeable:
        raise UserError(
            f"no problems match bench={spec.bench!r} difficulty={spec.difficulty!r}; build or import them first"
        )
    return judgeable[: spec.limit] if spec.limit else judgeable


# where the samples are drawn, not what is drawn: not part of a rollout's identity (extra_body is, once set)
ENGINE_FIELDS = ("engine", "server_url", "serve", "api_key_env", "concurrency", "request_timeout_s",
                 "server_start_timeout_s")  # fmt: skip


def experiment_id(spec: RolloutSpec, checkpoint_hash: str) -> str:
    key = {k: v for k, v in spec.model_dump().items() if k != "checkpoint" and k not in ENGINE_FIELDS}
    if key["extra_body"] is None:  # rollouts stored before the field existed keep their ids
        del key["extra_body"]
    if key["prompt_format"] == "auto":  # rollouts stored before the field existed keep their ids
        del key["prompt_format"]
    payload = json.dumps({"checkpoint": checkpoint_hash, **key}, sort_keys=True, default=str)
    return "rollout-" + hashlib.sha256(payload.encode()).hexdigest()[:12]


def to_sample(exp: str, ckpt: str, problem: Problem, idx: int, ep: Episode, setting: str) -> Sample:
    if setting == "agentic":
        code, error = (ep.submitted_code, None) if ep.submitted_code else (None, "no program was submitted")
    else:
        found = extract_code(ep.final_text, "python", ep.finish_reason)
        code, error = found.code, found.error
    transcript = [t.to_dict() for t in ep.turns] + ([{"role": "note", "content": n} for n in ep.notes])
    return Sample(
        experiment_id=exp,
        checkpoint_id=ckpt,
        problem_id=problem.id,
        sample_idx=idx,
        setting=setting,
        completion=ep.final_text,
        transcript=transcript,
        prompt_tokens=ep.prompt_tokens,
        completion_tokens=ep.completion_tokens,
        finish_reason=ep.finish_reason,
        code=code,
        language="python",
        extract_error=error,
        latency_s=ep.latency_s,
    )


def run_rollout(store: Store, spec: RolloutSpec, engine: Engine | None = None, progress: bool = True) -> str:
    """Sample every selected problem spec.sampling.n times; returns the experiment id."""
    from backend.hub import local_checkpoints, pin_checkpoints

    problems = select_problems(store, spec)
    pinned = pin_checkpoints(spec)  # a hub name is stored with the commit it resolved to
    spec = local_checkpoints(pinned)
    prompt_format = resolve_prompt_format(spec.prompt_format, [spec.checkpoint])
    ckpt = ensure_registered(store, spec.checkpoint)
    exp = experiment_id(spec, ckpt.content_hash)
    if store.get(Experiment, exp) is None:
        note = f"rollout of {ckpt.label}, {spec.setting} setting, n={spec.sampling.n}"
        stored = json.loads(pinned.model_dump_json()) | {"prompt_format": prompt_format}  # the format used, not "auto"
        store.put([Experiment(id=exp, kind="rollout", name=note, spec=stored)])
    from backend.rollout.engines import make_engine

    owned = engine is None  # an engine we build we also close; a caller's stays the caller's
    engine = engine or make_engine(spec.engine, spec.checkpoint, **rollout_engine_options(spec))

    def generate(conversations, sampling):
        return run_episodes(engine, conversations, spec.setting, sampling, spec.limits, spec.backend, prompt_format)

    try:
        with tqdm(total=len(problems), desc=f"rollout {spec.setting}", unit="problem", disable=not progress) as bar:
            sample_problems(
                store,
                exp,
                ckpt.id,
                problems,
                spec.setting,
                spec.sampling,
                generate,
                lambda batch, _: bar.update(len(batch)),
            )
    finally:
        if owned:
            engine.close()
    store.update(Experiment, (exp,), status="done")
    return exp


def rollout_engine_options(spec: RolloutSpec) -> dict:
    if spec.engine != "openai":
        return {}
    from backend.rollout.server_options import ServerOptions

    return {"options": ServerOptions.of(spec), "seed": spec.sampling.seed}


def sample_problems(
    store: Store,
    exp: str,
    checkpoint_id: str,
    problems: list[Problem],
    setting: str,
    sampling: SamplingSpec,
    generate: Callable,
    on_batch: Callable | None = None,
) -> None:
    """The one rollout loop (rollout CLI, sweeps, evals): the problems still missing samples, in
    batches (missing_batches); generate(conversations, sampling) → episodes per conversation; each
    batch's new samples stored in one short transaction; on_batch(batch, rows stored) after it."""
    for batch in missing_batches(store, exp, checkpoint_id, problems, sampling.n):
        episodes = generate(conversations(store, batch, setting), batch_sampling(sampling, batch))
        stored = store_batch(store, exp, checkpoint_id, batch, episodes, setting)
        if on_batch:
            on_batch(batch.problems, stored)


@dataclass(frozen=True)
class Batch:
    """Problems sampled in one generate call, at consecutive places of the run's problem list."""

    problems: list[Problem]
    place: int  # the first problem's place: its seeds start at S + place·n


def missing_batches(
    store: Store, exp: str, checkpoint_id: str, problems: list[Problem], n: int, block: int = 0
) -> list[Batch]:
    """The problems still missing samples, in batches of at most PROBLEMS_PER_BATCH, each split
    where a finished problem leaves a gap. Seeds follow the problem's place in `problems`, not in
    the batch: problem i's samples take S + (block + i)·n … S + (block + i)·n + n − 1 whichever
    batch it lands in and wherever that batch runs, so a run reuses no seed and a resumed run draws
    what the first drew. `block` sets a checkpoint of a multi-checkpoint job apart (checkpoint c:
    c·P, P problems), so that no two samples of the experiment share sampling noise."""
    done = store.sample_keys(exp, checkpoint_id)
    place = {p.id: i for i, p in enumerate(problems)}
    todo = [p for p in problems if any((p.id, i) not in done for i in range(n))]
    batches = []
    for start in range(0, len(todo), PROBLEMS_PER_BATCH):
        chunk = todo[start : start + PROBLEMS_PER_BATCH]
        run = [chunk[0]]
        for p in chunk[1:]:
            if place[p.id] != place[run[-1].id] + 1:
                batches.append(Batch(run, block + place[run[0].id]))
                run = []
            run.append(p)
        batches.append(Batch(run, block + place[run[0].id]))
    return batches


def batch_sampling(sampling: SamplingSpec, batch: Batch) -> SamplingSpec:
    return sampling.from_conversation(batch.place)


def conversations(store: Store, batch: Batch, setting: str) -> list[list[dict]]:
    return [conversation(p, setting, public_example(store, p)) for p in batch.problems]


def store_batch(store: Store, exp: str, checkpoint_id: str, batch: Batch, episodes, setting: str) -> int:
    """A batch's samples not yet stored, in one short transaction; returns how many."""
    done = store.sample_keys(exp, checkpoint_id)
    rows = [
        to_sample(exp, checkpoint_id, p, i, ep, setting)
        for p, eps in zip(batch.problems, episodes, strict=True)
        for i, ep in enumerate(eps)
    ]
    new = [r for r in rows if (r.problem_id, r.sample_idx) not in done]
    store.put(new, replace=False)
    return len(new)


def public_example(store: Store, problem: Problem) -> tuple[str, str] | None:
    public = [t for t in store.select(Test, {"problem_id": problem.id}) if t.is_public]
    return (public[0].input, public[0].output) if public else None
