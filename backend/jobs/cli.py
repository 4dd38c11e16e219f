"""`python -m backend sweep|eval ...` and `python -m backend jobs list|show|logs|cancel|resume`."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

from backend.cli import DbOption, open_store
from backend.errors import UserError
from backend.jobs import runner
from backend.jobs.spec import EvalSpec, SweepSpec, validate_spec
from backend.records import Job
from backend.store import Store

jobs_app = typer.Typer(help="Jobs: list, show, logs, cancel, resume.", no_args_is_help=True)

Setting = Annotated[str, typer.Option("--setting", help="reasoning | tool | agentic")]


def _common(
    bench,
    difficulty,
    problem,
    limit,
    n,
    setting,
    temperature,
    top_p,
    max_tokens,
    seed,
    engine,
    executor,
    ray_address,
    backend,
):
    return {
        "bench": bench, "difficulty": difficulty, "problems": problem or [], "limit": limit, "n": n, "setting": setting,
        "temperature": temperature, "top_p": top_p, "max_tokens": max_tokens, "seed": seed, "engine": engine,
        "executor": executor, "ray_address": ray_address, "judge_backend": backend,
    }  # fmt: skip


def sweep_command(
    low: Annotated[str, typer.Option("--low", help="θ_low checkpoint folder (α = 0).")],
    high: Annotated[str, typer.Option("--high", help="θ_high checkpoint folder (α = 1).")],
    alphas: Annotated[str, typer.Option("--alphas", help='Grid: "-1:2:0.25", "-0.5,0,0.5,1,1.5" or mixed.')],
    bench: Annotated[str, typer.Option("--bench")] = "builtin",
    difficulty: Annotated[str | None, typer.Option("--difficulty")] = None,
    problem: Annotated[list[str] | None, typer.Option("--problem")] = None,
    limit: Annotated[int | None, typer.Option("--limit")] = None,
    n: Annotated[int, typer.Option("-n")] = 8,
    setting: Setting = "reasoning",
    temperature: Annotated[float, typer.Option("--temperature")] = 1.0,
    top_p: Annotated[float, typer.Option("--top-p")] = 1.0,
    max_tokens: Annotated[int, typer.Option("--max-tokens")] = 1024,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    engine: Annotated[str, typer.Option("--engine")] = "auto",
    executor: Annotated[str, typer.Option("--executor", help="local | ray")] = "local",
    ray_address: Annotated[str | None, typer.Option("--ray-address", help="auto | HOST:PORT")] = None,
    backend: Annotated[str, typer.Option("--backend", help="Judge sandbox: bwrap | docker | none")] = "bwrap",
    live_switch: Annotated[
        bool, typer.Option("--live-switch", help="Switch α in the loaded model; write no merged folders.")
    ] = False,
    independent: Annotated[
        list[str] | None,
        typer.Option("--independent", help="Independently trained checkpoint to evaluate alongside; repeatable."),
    ] = None,
    detach: Annotated[bool, typer.Option("--detach", help="Return at once; the job runs on.")] = False,
    db: DbOption = None,
) -> None:
    """Merge θ_low/θ_high at every α, sample, judge and store: one resumable job."""
    data = {"low": low, "high": high, "alphas": alphas, "keep_merged": not live_switch, "independent": independent or [],
            **_common(bench, difficulty, problem, limit, n, setting, temperature, top_p, max_tokens, seed, engine, executor, ray_address, backend)}  # fmt: skip
    launch(open_store(db), validate_spec(SweepSpec, data), detach)


def eval_command(
    checkpoint: Annotated[list[str], typer.Option("--checkpoint", help="Checkpoint folder; repeatable.")],
    bench: Annotated[str, typer.Option("--bench")] = "builtin",
    difficulty: Annotated[str | None, typer.Option("--difficulty")] = None,
    problem: Annotated[list[str] | None, typer.Option("--problem")] = None,
    limit: Annotated[int | None, typer.Option("--limit")] = None,
    n: Annotated[int, typer.Option("-n")] = 8,
    setting: Setting = "reasoning",
    temperature: Annotated[float, typer.Option("--temperature")] = 1.0,
    top_p: Annotated[float, typer.Option("--top-p")] = 1.0,
    max_tokens: Annotated[int, typer.Option("--max-tokens")] = 1024,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    engine: Annotated[str, typer.Option("--engine")] = "auto",
    executor: Annotated[str, typer.Option("--executor")] = "local",
    ray_address: Annotated[str | None, typer.Option("--ray-address")] = None,
    backend: Annotated[str, typer.Option("--backend")] = "bwrap",
    detach: Annotated[bool, typer.Option("--detach")] = False,
    db: DbOption = None,
) -> None:
    """Evaluate existing checkpoints (e.g. independently trained R_k runs) as one job."""
    data = {
        "checkpoints": checkpoint,
        **_common(
            bench,
            difficulty,
            problem,
            limit,
            n,
            setting,
            temperature,
            top_p,
            max_tokens,
            seed,
            engine,
            executor,
            ray_address,
            backend,
        ),
    }
    launch(open_store(db), validate_spec(EvalSpec, data), detach)


def launch(store: Store, spec, detach: bool) -> None:
    job = runner.create_job(store, spec)
    pid = runner.start(store, job.id)
    typer.echo(f"job {job.id} (experiment {job.experiment_id}) started, pid {pid}; log: {job.log_path}")
    if not detach:
        watch(store, job.id)


def watch(store: Store, job_id: str) -> None:
    """Progress bars per stage until the job ends. Ctrl-C stops watching, not the job."""
    columns = (
        TextColumn("{task.description:<8}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeRemainingColumn(),
    )
    try:
        with Progress(*columns) as bars:
            tasks: dict[str, int] = {}
            while True:
                job = runner.refresh(store, store.get(Job, job_id))
                for stage, p in (job.progress or {}).items():
                    if stage not in tasks:
                        tasks[stage] = bars.add_task(stage, total=p["total"] or 1)
                    bars.update(tasks[stage], completed=p["done"], total=p["total"] or 1)
                if job.status not in ("running", "queued"):
                    break
                time.sleep(0.5)
    except KeyboardInterrupt:
        typer.echo(f"stopped watching; the job runs on (python -m backend jobs show {job_id})")
        return
    typer.echo(f"job {job_id}: {job.status}" + (f" ({job.error})" if job.error else ""))
    if job.status == "failed":
        raise UserError(f"job {job_id} failed: {job.error}; see its log, then `python -m backend jobs resume {job_id}`")


@jobs_app.command("list")
def jobs_list(db: DbOption = None, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    store = open_store(db)
    jobs = [runner.refresh(store, j) for j in store.select(Job, order_by="created_at DESC")]
    if as_json:
        typer.echo(
            json.dumps(
                [
                    {"id": j.id, "kind": j.kind, "status": j.status, "stage": j.stage, "experiment_id": j.experiment_id}
                    for j in jobs
                ]
            )
        )
        return
    for j in jobs:
        typer.echo(f"{j.id}  {j.kind:<6} {j.status:<10} {j.stage or '-':<8} {j.experiment_id}  {j.error or ''}")


@jobs_app.command("show")
def jobs_show(job_id: str, db: DbOption = None) -> None:
    store = open_store(db)
    job = runner.refresh(store, runner.get_job(store, job_id))
    typer.echo(
        json.dumps(
            {k: v for k, v in job.__dict__.items() if k not in ("created_at", "updated_at")}
            | {"updated_at": str(job.updated_at)},
            indent=2,
        )
    )


@jobs_app.command("logs")
def jobs_logs(job_id: str, tail: Annotated[int, typer.Option("--tail")] = 50, db: DbOption = None) -> None:
    job = runner.get_job(open_store(db), job_id)
    try:
        lines = Path(job.log_path).read_text().splitlines()
    except OSError as exc:
        raise UserError(f"no log for {job_id} at {job.log_path}") from exc
    typer.echo("\n".join(lines[-tail:]))


@jobs_app.command("cancel")
def jobs_cancel(job_id: str, db: DbOption = None) -> None:
    job = runner.cancel(open_store(db), job_id)
    typer.echo(f"job {job.id}: {job.status}")


@jobs_app.command("resume")
def jobs_resume(job_id: str, detach: Annotated[bool, typer.Option("--detach")] = False, db: DbOption = None) -> None:
    store = open_store(db)
    pid = runner.resume(store, job_id)
    typer.echo(f"job {job_id} resumed, pid {pid}")
    if not detach:
        watch(store, job_id)


@jobs_app.command("run-job", hidden=True)
def jobs_run(job_id: str, db: DbOption = None) -> None:
    """The body of a detached job process (started by sweep/eval/resume)."""
    runner.run_job_here(open_store(db), job_id)


def register(app: typer.Typer) -> None:
    app.command("sweep")(sweep_command)
    app.command("eval")(eval_command)
    app.add_typer(jobs_app, name="jobs")
