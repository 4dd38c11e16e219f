"""`lab build`: the whole method on a CPU, from nothing.

problems → per-problem limits and the separation check → tokenizer + tiny Qwen2 → SFT → two GRPO
endpoints (low / high coverage reward) → α sweep with the SFT overlaid (a real sweep job) →
findings report, per problem set → committed artifacts.

Everything is written into `<out>.building` and moved into place at the end, so a failed or
interrupted build never leaves the committed artifacts half-replaced.
"""

from __future__ import annotations

import json
import platform
import shutil
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

import typer

from backend.errors import UserError
from backend.jobs import runner
from backend.lab.artifacts import export_results
from backend.lab.problems import (
    BENCH,
    HELD_IN,
    lab_problems,
    split_of,
    store_lab_problems,
    with_limits,
    withheld_and_kept,
    withheld_sets,
)
from backend.lab.recipe import LAB_LABEL, LabRecipe
from backend.lab.report import subsets, write_report
from backend.lab.sft import train_sft
from backend.merge.checkpoints import ensure_registered
from backend.records import Checkpoint, Experiment
from backend.rl.trainer import run_rl
from backend.rollout.run import public_example
from backend.store import Store


@contextmanager
def stage(name: str, timings: dict):
    typer.secho(f"── {name}", bold=True)
    began = time.perf_counter()
    yield
    timings[name] = round(time.perf_counter() - began, 1)
    typer.echo(f"   {name}: {timings[name]:.0f} s")


def build(
    recipe: LabRecipe, out: Path, progress: bool = True, watch_job: Callable[[Store, str], None] | None = None
) -> dict:
    """The whole lab into `out`. The sweep runs as a real job; with `watch_job` it runs detached and
    watch_job(store, job_id) reports its progress (the CLI draws bars), else in this process."""
    staging = out.with_name(out.name + ".building")
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "checkpoints").mkdir(parents=True)
    (staging / "work").mkdir()
    store = Store(staging / "work" / "lab.duckdb")
    timings: dict[str, float] = {}
    began = time.perf_counter()

    with stage("problems", timings):
        built = lab_problems(recipe, progress)
    with stage("limits and separation", timings):
        separations = _separation(recipe, built, progress)
        built = store_lab_problems(store, with_limits(built, {r.problem_id: r.limit_s for r in separations}))
        held_in = [p for p, _ in built if split_of(p) == HELD_IN]
        problem_sets = {
            "held_in": [p.id for p in held_in],
            "held_out": [p.id for p, _ in built if split_of(p) != HELD_IN],
            "separating": [r.problem_id for r in separations if r.separating],
        }
        problem_sets |= withheld_sets(held_in, problem_sets["separating"], recipe.withheld_share, recipe.seed)
        if "withheld" in problem_sets:
            typer.echo(
                f"   {len(problem_sets['withheld'])} of the separating held-in problems trained without their "
                f"reference, {len(problem_sets['kept'])} with it"
            )
    with stage("SFT", timings):
        sft = staging / "checkpoints" / "sft"
        examples = [(p, public_example(store, p)) for p in held_in]
        sft_info = train_sft(recipe, examples, sft, progress, problem_sets.get("withheld", ()))
        sft_id = ensure_registered(store, sft, label="SFT").id
    endpoints, rl_experiments = {}, []
    for name, reward in (("low", recipe.low_reward), ("high", recipe.high_reward)):
        with stage(f"RL {name} ({reward})", timings):
            exp, folder = _train_endpoint(store, recipe, sft, reward, staging, name, [p.id for p in held_in], progress)
            endpoints[name] = folder
            rl_experiments.append(exp)
    with stage("sweep", timings):
        sweep_exp = _sweep(store, recipe, endpoints, sft, [p.id for p, _ in built], held_in, watch_job)
    with stage("report", timings):
        sets = subsets(problem_sets) | withheld_and_kept(problem_sets)
        write_report(store.outcome_counts(sweep_exp), sets, recipe.seed, staging)
    counts = export_results(store, [sweep_exp, *rl_experiments], staging, staging)
    manifest = {
        "recipe": recipe.to_dict(),
        "fingerprint": recipe.fingerprint(),
        "label": LAB_LABEL,
        "sweep_experiment": sweep_exp,
        "rl_experiments": rl_experiments,
        "sft_checkpoint": sft_id,
        **problem_sets,
        "problems": {r.problem_id: r.as_dict() for r in separations},
        "sft": sft_info,
        "rows": counts,
        "timings_s": timings | {"total": round(time.perf_counter() - began, 1)},
        "machine": f"{platform.machine()}, {_cpus()} CPUs",
    }
    (staging / "recipe.json").write_text(json.dumps(manifest, indent=1))
    shutil.rmtree(staging / "work")
    shutil.rmtree(out, ignore_errors=True)
    staging.rename(out)
    return manifest


def _separation(recipe: LabRecipe, built, progress: bool) -> list:
    """Each problem's own limit and whether it separates (lab/separation.py), when the recipe asks
    for per-problem limits; none under one fixed limit."""
    from backend.lab.separation import separation

    if recipe.time_limit_s is not None:
        typer.echo(f"   one CPU limit for every problem: {recipe.time_limit_s:g} s")
        return []
    reports = separation(built, runs=recipe.limit_runs, progress=progress)
    apart = [f"{r.problem_id} ({'; '.join(r.reasons)})" for r in reports if not r.separating]
    typer.echo(
        f"   {len(reports) - len(apart)} of {len(reports)} problems separate fast from slow code; "
        f"limits {min(r.limit_s for r in reports):g}-{max(r.limit_s for r in reports):g} s"
    )
    for line in apart:
        typer.echo(f"   not separating: {line}")
    return reports


def _train_endpoint(store, recipe, sft, reward, staging, name, problems, progress) -> tuple[str, Path]:
    work = staging / "work" / f"rl-{name}"
    spec = recipe.rl_spec(reward, base=str(sft), output_dir=str(work), bench=BENCH, problems=problems)
    exp = run_rl(store, spec, progress)
    folder = staging / "checkpoints" / name
    shutil.copytree(
        work / "final", folder, ignore=shutil.ignore_patterns("training_args.bin")
    )  # a pickle: not committed
    row = ensure_registered(store, folder)
    store.update(Checkpoint, (row.id,), path=str(folder), label=f"{name}: {reward}")
    store.update(Experiment, (exp,), name=f"{LAB_LABEL}: GRPO endpoint {name} ({reward})")
    return exp, folder


def _sweep(store, recipe, endpoints, sft, problems, trained, watch_job) -> str:
    from backend.sweep.spec import same_checkpoint

    low, high = str(endpoints["low"]), str(endpoints["high"])
    same = same_checkpoint(low, high)
    if same and not recipe.is_smoke:
        raise UserError(
            "the two RL endpoints have identical weights (RL did not move them), so a sweep would show one model"
        )
    if same:
        print(
            "lab build --smoke: the two RL endpoints have identical weights (rewards were all 0); sweeping anyway "
            "to exercise the pipeline",
            flush=True,
        )
    spec = recipe.sweep_spec(
        low=low, high=high, independent=[str(sft)], bench=BENCH, problems=problems, allow_same_endpoints=same
    )
    name = f"{LAB_LABEL}: α sweep {recipe.low_reward} → {recipe.high_reward}"
    limit = (
        f"{recipe.time_limit_s:g} s CPU limit"
        if recipe.time_limit_s
        else "each problem's own CPU limit, 3x its reference's CPU time and at least 0.05 s"
    )
    held_out = len(problems) - len(trained)
    unseen = f" and on {held_out} held-out problems it never saw (tagged held-out)" if held_out else ""
    note = (
        f"{LAB_LABEL[0].upper()}{LAB_LABEL[1:]}. A {recipe.hidden_size}-wide, {recipe.num_layers}-layer Qwen2 "
        f"trained here on {len(trained)} of our builtin "
        f"problems (tests up to 10^{recipe.max_tier} characters, {limit}); evaluated on "
        f"the problems it was trained on{unseen}. Not a real model; see docs/lab.md."
    )
    job = runner.create_job(store, spec, name=name, note=note)
    if watch_job:
        runner.start(store, job.id)
        watch_job(store, job.id)
    else:
        runner.run_job_here(store, job.id)
    return job.experiment_id


def _cpus() -> int:
    import os

    return len(os.sched_getaffinity(0))
