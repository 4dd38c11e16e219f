"""The rollout batch API: sample a checkpoint on a problem set in one setting, store the samples
(with transcripts and extracted code) under one experiment. Re-running the same spec resumes."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import TYPE_CHECKING

from pydantic import Field
from tqdm import tqdm

from backend.errors import UserError
from backend.merge.registry import ensure_registered
from backend.records import Experiment, Problem, Sample, Test
from backend.rollout.extract import extract_code
from backend.rollout.prompts import conversation, require_chat_template
from backend.rollout.settings import SettingLimits, run_episodes
from backend.rollout.spec import Episode, ProblemSelection, SamplingSpec, SettingChoice
from backend.store import Store
from backend.vocab import EngineName, SandboxBackend

if TYPE_CHECKING:  # engines import torch; the CLI reads RolloutSpec from here without it
    from backend.rollout.engines import Engine

PROBLEMS_PER_BATCH = 8


class RolloutSpec(ProblemSelection, SettingChoice):
    """`python -m backend rollout`: sample one checkpoint on a problem set, store the samples."""

    checkpoint: str = Field(title="Checkpoint folder")
    """Hugging Face checkpoint folder (config.json + safetensors)."""
    sampling: SamplingSpec = SamplingSpec()
    limits: SettingLimits = SettingLimits()
    engine: EngineName = Field("auto", title="Engine")
    """auto: vLLM when it is installed and a GPU is present, else transformers."""
    backend: SandboxBackend = Field("bwrap", title="Sandbox")
    """Where tool calls and agentic commands run: bwrap (default), docker, or none (no isolation)."""


def select_problems(store: Store, spec: ProblemSelection) -> list[Problem]:
    """The judgeable problems a spec names (any spec with the ProblemSelection fields)."""
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


def experiment_id(spec: RolloutSpec, checkpoint_hash: str) -> str:
    key = {k: v for k, v in spec.model_dump().items() if k not in ("checkpoint", "engine")}
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
        experiment_id=exp, checkpoint_id=ckpt, problem_id=problem.id, sample_idx=idx, setting=setting,
        completion=ep.final_text, transcript=transcript, prompt_tokens=ep.prompt_tokens,
        completion_tokens=ep.completion_tokens, finish_reason=ep.finish_reason, code=code, language="python",
        extract_error=error, latency_s=ep.latency_s,
    )  # fmt: skip


def run_rollout(store: Store, spec: RolloutSpec, engine: Engine | None = None, progress: bool = True) -> str:
    """Sample every selected problem spec.sampling.n times; returns the experiment id."""
    problems = select_problems(store, spec)
    require_chat_template(spec.checkpoint)
    ckpt = ensure_registered(store, spec.checkpoint)
    exp = experiment_id(spec, ckpt.content_hash)
    if store.get(Experiment, exp) is None:
        note = f"rollout of {ckpt.label}, {spec.setting} setting, n={spec.sampling.n}"
        store.put([Experiment(id=exp, kind="rollout", name=note, spec=json.loads(spec.model_dump_json()))])
    from backend.rollout.engines import make_engine

    engine = engine or make_engine(spec.engine, spec.checkpoint)

    def generate(conversations):
        return run_episodes(engine, conversations, spec.setting, spec.sampling, spec.limits, spec.backend)

    with tqdm(total=len(problems), desc=f"rollout {spec.setting}", unit="problem", disable=not progress) as bar:
        sample_problems(store, exp, ckpt.id, problems, spec.setting, spec.sampling.n, generate,
                        lambda batch, _: bar.update(len(batch)))  # fmt: skip
    store.update(Experiment, (exp,), status="done")
    return exp


def sample_problems(store: Store, exp: str, checkpoint_id: str, problems: list[Problem], setting: str, n: int,
                    generate: Callable, on_batch: Callable | None = None) -> None:  # fmt: skip
    """The one rollout loop (rollout CLI, sweeps, evals): the problems still missing samples, in
    batches of PROBLEMS_PER_BATCH; generate(conversations) → episodes per conversation; each
    batch's new samples stored in one short transaction; on_batch(batch, rows stored) after it."""
    done = store.sample_keys(exp, checkpoint_id)
    todo = [p for p in problems if any((p.id, i) not in done for i in range(n))]
    for start in range(0, len(todo), PROBLEMS_PER_BATCH):
        batch = todo[start : start + PROBLEMS_PER_BATCH]
        episodes = generate([conversation(p, setting, public_example(store, p)) for p in batch])
        rows = [to_sample(exp, checkpoint_id, p, i, ep, setting)
                for p, eps in zip(batch, episodes, strict=True) for i, ep in enumerate(eps)]  # fmt: skip
        new = [r for r in rows if (r.problem_id, r.sample_idx) not in done]
        store.put(new, replace=False)
        if on_batch:
            on_batch(batch, len(new))


def public_example(store: Store, problem: Problem) -> tuple[str, str] | None:
    public = [t for t in store.select(Test, {"problem_id": problem.id}) if t.is_public]
    return (public[0].input, public[0].output) if public else None
