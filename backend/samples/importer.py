"""`samples import FILE`: samples made elsewhere (verl or OpenRLHF rollouts, a lab's own serving stack,
LiveCodeBench's custom_evaluator input) judged in the sandbox and stored as an experiment of their
own, kind "import", whose note and stored spec say where its samples came from (provenance shows it).

The file is read and checked whole first (backend/samples/files.py; then its problems and
checkpoints here), so a bad file stores nothing. The experiment's id follows from the file's bytes
and the options, so importing the same file again adds nothing, and an import stopped while judging
goes on where it stopped. Extraction (a `completion`'s last fenced block), judging and the outcome
rule are a sweep's: backend/rollout/extract.py, backend/sweep/pipeline.py JudgeInputs.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tqdm import tqdm

from backend.errors import UserError
from backend.records import Evaluation, Experiment, Problem, Sample
from backend.rollout.extract import extract_code
from backend.samples.files import Row, SampleFile, listed, read
from backend.samples.spec import SampleImportSpec

if TYPE_CHECKING:
    from backend.store import Store

# the command that brings a benchmark's problems into the database
BRINGS = {
    "builtin": "python -m backend problems build-builtin",
    "lcb": "python -m backend problems import lcb PATH (or --hub)",
    "ccplus": "python -m backend problems import ccplus PATH (or --hub)",
}
NAMES = {"builtin": "builtin", "lcb": "LiveCodeBench", "ccplus": "CodeContests+"}


@dataclass(frozen=True)
class Imported:
    experiment: str
    samples: int  # added by this import
    evaluations: int  # added by this import
    total: int  # the experiment's samples

    def line(self) -> str:
        if not self.samples and not self.evaluations:
            return f"experiment {self.experiment}: already imported ({self.total} samples, all judged); nothing added"
        return f"experiment {self.experiment}: {self.samples} samples stored, {self.evaluations} judged"


def import_samples(store: Store, spec: SampleImportSpec, progress: bool = True) -> Imported:
    file = read(spec.file, spec.format, spec.checkpoint, spec.setting)
    problems = _problems(store, file)
    exp = _experiment_id(file, spec)
    added = 0
    if store.get(Experiment, exp) is None or store.count(Sample, {"experiment_id": exp}) < len(file.rows):
        sources = _checkpoints(store, file)  # the first write: everything above only read
        store.put([_experiment(exp, file, spec)], replace=False)
        done = _stored_keys(store, exp)
        rows = [_sample(exp, sources[r.source], r, file) for r in file.rows]
        new = [s for s in rows if (s.checkpoint_id, s.problem_id, s.sample_idx) not in done]
        store.put(new, replace=False)
        added = len(new)
    judged = _judge(store, exp, problems, spec, progress)
    store.update(Experiment, (exp,), status="done")
    return Imported(exp, added, judged, store.count(Sample, {"experiment_id": exp}))


def _problems(store: Store, file: SampleFile) -> dict[str, Problem]:
    """The file's problems, each stored and judgeable; else one line naming what is missing."""
    wanted = sorted({r.problem_id for r in file.rows})
    benches = sorted({pid.split("/", 1)[0] for pid in wanted})
    stored = {p.id: p for b in benches for p in store.select(Problem, {"bench": b})}
    for bench in benches:
        if not any(p.bench == bench for p in stored.values()):
            first = next(p for p in wanted if p.startswith(f"{bench}/"))
            bring = BRINGS.get(bench, "import that benchmark into this database")
            raise UserError(
                f"{file.path.name} names {NAMES.get(bench, bench)} problems ({first}) and the database holds none; "
                f"bring them with `{bring}`, then import again (nothing was stored)"
            )
    unknown = [p for p in wanted if p not in stored]
    if unknown:
        raise UserError(
            f"{file.path.name}: {len(unknown)} problem id(s) not in the database, nothing imported: {listed(unknown)}; "
            "see `python -m backend problems list`"
        )
    broken = [p for p in wanted if stored[p].judge_error]
    if broken:
        raise UserError(f"{file.path.name}: {len(broken)} unjudgeable problem(s), nothing imported: {listed(broken)}")
    return {p: stored[p] for p in wanted}


def _experiment_id(file: SampleFile, spec: SampleImportSpec) -> str:
    options = spec.model_dump(exclude={"file", "kind"}) | {"format": file.format}
    payload = json.dumps({"sha256": file.digest, **options}, sort_keys=True)
    return "import-" + hashlib.sha256(payload.encode()).hexdigest()[:12]


def _experiment(exp: str, file: SampleFile, spec: SampleImportSpec) -> Experiment:
    counts: dict[tuple, int] = {}
    for r in file.rows:
        counts[(r.source, r.problem_id)] = counts.get((r.source, r.problem_id), 0) + 1
    alphas = sorted({r.alpha for r in file.rows if r.alpha is not None})
    stored = spec.model_dump() | {
        "file": str(file.path.absolute()),
        "format": file.format,
        "sha256": file.digest,
        "samples_from": file.described,
        "n": max(counts.values()),
        "alphas": alphas,
        "problems": sorted({r.problem_id for r in file.rows}),
    }
    note = f"samples imported from {file.described}; code extracted and judged here"
    return Experiment(id=exp, kind="import", name=f"samples from {file.path.name}", spec=stored, note=note)


def _checkpoints(store: Store, file: SampleFile) -> dict[tuple, str]:
    """Each source's checkpoint id: a folder by its content, a name or label by itself, an α point by
    its α and endpoints."""
    from backend.merge import checkpoints

    def one(ref: str) -> str:
        folder = Path(ref).expanduser()
        if (folder / "config.json").is_file():
            return checkpoints.ensure_registered(store, folder).id
        return checkpoints.external(store, ref).id

    out = {}
    for source in dict.fromkeys(r.source for r in file.rows):
        name, alpha, low, high = source
        if alpha is None:
            out[source] = one(name)
        else:
            out[source] = checkpoints.external(store, name, alpha, [one(low), one(high)]).id
    return out


def _stored_keys(store: Store, exp: str) -> set[tuple]:
    return {(s.checkpoint_id, s.problem_id, s.sample_idx) for s in store.select(Sample, {"experiment_id": exp})}


def _sample(exp: str, checkpoint_id: str, r: Row, file: SampleFile) -> Sample:
    if r.code is not None:
        text, code, error = r.code, r.code, None
    else:
        found = extract_code(r.completion, "python", "stop")
        text, code, error = r.completion, found.code, found.error
    where = f"imported from {file.path.name}, {'entry' if file.format == 'lcb' else 'line'} {r.line}"
    return Sample(
        experiment_id=exp,
        checkpoint_id=checkpoint_id,
        problem_id=r.problem_id,
        sample_idx=r.sample_idx,
        setting=r.setting,
        completion=text,
        transcript=[{"role": "note", "content": where}, {"role": "assistant", "content": text}],
        code=code,
        language="python",
        extract_error=error,
    )


def _judge(store: Store, exp: str, problems: dict[str, Problem], spec: SampleImportSpec, progress: bool) -> int:
    """The experiment's samples without an evaluation, judged in a pool over all cores, each stored as it ends."""
    from backend.grading.pool import JudgePool
    from backend.sweep.pipeline import JudgeInputs

    judged = {(e.checkpoint_id, e.problem_id, e.sample_idx) for e in store.select(Evaluation, {"experiment_id": exp})}
    todo = [
        s
        for s in store.select(Sample, {"experiment_id": exp})
        if (s.checkpoint_id, s.problem_id, s.sample_idx) not in judged
    ]
    if not todo:
        return 0
    inputs = {pid: JudgeInputs.of(store, p, spec) for pid, p in problems.items()}
    pool = JudgePool()
    try:
        pool.submit([inputs[s.problem_id].job(s, spec.backend) for s in todo])
        with tqdm(total=len(todo), desc="judge", unit="sample", disable=not progress) as bar:
            while pool.pending:
                done = pool.collect(block=True)
                store.put([Evaluation.of(exp, d.key, d.judgement) for d in done], replace=False)
                bar.update(len(done))
    finally:
        pool.close()
    return len(todo)
