"""`python -m backend jobs list|show|logs|cancel|resume`, and how a job command (sweep, eval, rl)
starts its job and follows it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from backend.cli.options import DbOption, DetachOption, JsonOption, open_store
from backend.errors import UserError
from backend.jobs import runner
from backend.records import Job

if TYPE_CHECKING:
    from rich.progress import Progress

    from backend.store import Store

jobs_app = typer.Typer(help="Jobs: list, show, logs, cancel, resume.", no_args_is_help=True)


def launch(store: Store, spec, detach: bool) -> None:
    job = runner.create_job(store, spec)
    pid = runner.start(store, job.id)
    typer.echo(f"job {job.id} (experiment {job.experiment_id}) started, pid {pid}; log: {job.log_path}")
    if not detach:
        watch(store, job.id)


def watch(store: Store, job_id: str) -> None:
    """Progress bars per stage until the job ends. Ctrl-C stops watching, not the job."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    columns = (
        TextColumn("{task.description:<8}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeRemainingColumn(),
    )
    try:
        with Progress(*columns) as bars:
            job = runner.wait(store, job_id, stage_bars(bars))
    except KeyboardInterrupt:
        typer.echo(f"stopped watching; the job runs on (python -m backend jobs show {job_id})")
        return
    typer.echo(f"job {job_id}: {job.status}" + (f" ({job.error})" if job.error else ""))
    if job.status == "failed":
        raise UserError(f"job {job_id} failed: {job.error}; see its log, then `python -m backend jobs resume {job_id}`")


def stage_bars(bars: Progress):
    tasks: dict[str, int] = {}

    def update(job: Job) -> None:
        for stage, p in runner.stages(job).items():
            if stage not in tasks:
                tasks[stage] = bars.add_task(stage, total=p["total"] or 1)
            bars.update(tasks[stage], completed=p["done"], total=p["total"] or 1)
        for line in runner.actor_lines(job):  # a Ray job's engine actors: node, GPU, point, rate
            name = line.split(" ", 1)[0]
            if name not in tasks:
                tasks[name] = bars.add_task(line, total=None)
            bars.update(tasks[name], description=line)

    return update


@jobs_app.command("list")
def jobs_list(db: DbOption = None, as_json: JsonOption = False) -> None:
    jobs = runner.list_jobs(open_store(db))
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
    job = runner.observed(runner.get_job(open_store(db), job_id))
    typer.echo(
        json.dumps(
            {k: v for k, v in job.__dict__.items() if k not in ("created_at", "updated_at")}
            | {"updated_at": str(job.updated_at)},
            indent=2,
        )
    )


@jobs_app.command("logs")
def jobs_logs(
    job_id: str,
    # no spec can hold this: how much of a log to print, not what a job does
    tail: Annotated[int, typer.Option("--tail", min=1, help="Print the last N lines.")] = 50,
    db: DbOption = None,
) -> None:
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
def jobs_resume(job_id: str, detach: DetachOption = False, db: DbOption = None) -> None:
    store = open_store(db)
    pid = runner.resume(store, job_id)
    typer.echo(f"job {job_id} resumed, pid {pid}")
    if not detach:
        watch(store, job_id)


@jobs_app.command("run-job", hidden=True)
def jobs_run(job_id: str, db: DbOption = None) -> None:
    """The body of a detached job process (started by sweep/eval/resume)."""
    import signal
    import sys

    # cancel sends SIGTERM: leave through the job's finally blocks, so its engine is closed
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    runner.run_job_here(open_store(db), job_id)


def register(app: typer.Typer) -> None:
    app.add_typer(jobs_app, name="jobs")
