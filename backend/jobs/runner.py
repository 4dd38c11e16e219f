"""Jobs run detached from whoever started them (CLI, dashboard): a new process session that
outlives the app and the browser. The job's process is the only writer for its job.

A job whose process died without saying so (kill -9, power loss) is shown as failed; `resume`
starts it again and the pipeline computes only what is missing.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import signal
import subprocess
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import psutil

from backend.errors import FieldError, UserError
from backend.records import Experiment, Job
from backend.rl.spec import RLSpec
from backend.sandbox.cgroup_detect import systemd_scope_prefix
from backend.sweep.spec import (
    EvalSpec,
    SweepSpec,
    driver_paths,
    folder_fields,
    job_folders,
    stored_spec,
    validate_spec,
)

if TYPE_CHECKING:  # duckdb and pyarrow load with the first store a command opens, not with `sweep --help`
    from backend.store import Store

SPECS = {"sweep": SweepSpec, "eval": EvalSpec, "rl": RLSpec}  # job kind → its spec


ROOT = Path(__file__).resolve().parents[2]


def log_path(store: Store, job_id: str) -> Path:
    folder = store.path.parent / "jobs"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{job_id}.log"


def _title(spec) -> str:
    from backend.hub import checkpoint_label

    if spec.kind == "sweep":
        return f"α sweep {checkpoint_label(spec.low)} → {checkpoint_label(spec.high)}"
    if spec.kind == "rl":
        return f"GRPO from {checkpoint_label(spec.base)} with {spec.reward}"
    return f"eval of {len(spec.checkpoints)} checkpoint(s)"


def create_job(store: Store, spec, name: str | None = None, note: str | None = None) -> Job:
    """Experiment + queued job rows for a validated spec (its checkpoint folders and prompt format
    checked first; a live vLLM switch's device memory is planned by the job itself, on its leased
    device when its turn comes, never in this caller's process). The stored spec names the prompt
    format the job uses (auto resolved)."""
    from backend.hub import local_checkpoints, pin_checkpoints
    from backend.merge.io import CheckpointFolder
    from backend.rollout.prompts import resolve_prompt_format

    spec = pin_checkpoints(driver_paths(spec))  # absolute folders, hub names pinned to their commit: stored so
    local = local_checkpoints(spec)  # the job and its Ray tasks run in other directories, on the same weights
    for field, folder in folder_fields(local):
        try:
            CheckpointFolder(folder).close()  # raises one clear line for a missing or broken folder
        except FieldError:
            raise
        except UserError as err:  # about the folder one field names: a form shows it under that field
            raise FieldError(str(err), field) from None
    if local is not spec:  # the spec's rules again on the folders: a name and a copy of one content are one checkpoint
        validate_spec(type(spec), json.loads(local.model_dump_json()))
    spec = spec.model_copy(update={"prompt_format": resolve_prompt_format(spec.prompt_format, job_folders(local))})
    _check_gpus_free(store, spec)
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    exp_id = f"{spec.kind}-{stamp}-{uuid.uuid4().hex[:6]}"
    job = Job(id=f"job-{uuid.uuid4().hex[:10]}", kind=spec.kind, status="queued", experiment_id=exp_id)
    job.log_path = str(log_path(store, job.id))
    title = name or getattr(spec, "name", None) or _title(spec)  # the spec's name: a CLI flag and a form field
    with store.transaction() as con:
        store.put(
            [Experiment(id=exp_id, kind=spec.kind, name=title, spec=json.loads(spec.model_dump_json()), note=note)],
            con=con,
        )
        store.put([job], con=con)
    return job


def start(store: Store, job_id: str, detach: bool = True) -> int:
    """Run the job in a new process session (detached) or in this process; returns the pid."""
    job = get_job(store, job_id)
    if detach:
        with open(job.log_path, "a") as log:
            pid = spawn([sys.executable, "-m", "backend", "jobs", "run-job", job_id, "--db", str(store.path)], log)
        store.update(Job, (job_id,), pid=pid, status="queued", error=None)
        return pid
    run_job_here(store, job_id)
    return os.getpid()


def spawn(argv: list[str], log) -> int:
    """A detached process in its own session. A thread of ours waits for it, so when it ends it is
    reaped at once: a long-lived starter (the dashboard's server) keeps no <defunct> children."""
    argv = [*systemd_scope_prefix(), *argv]  # a delegated cgroup for the judge where it needs one
    proc = subprocess.Popen(
        argv, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
    )
    threading.Thread(target=proc.wait, name=f"reap-{proc.pid}", daemon=True).start()
    return proc.pid


def run_job_here(store: Store, job_id: str) -> None:
    """The body of a job's process: run the pipeline, record done / failed."""
    from transformers.utils import logging as hf_logging

    from backend.sweep.pipeline import Progress, run_pipeline

    # "Loading weights" bars would fill the job's log; its own progress is in the store
    hf_logging.disable_progress_bar()
    job = get_job(store, job_id)
    exp = store.get(Experiment, job.experiment_id)
    spec = validate_spec(SPECS[job.kind], stored_spec(job.kind, exp.spec))
    store.update(Job, (job_id,), status="running", pid=os.getpid(), error=None)
    store.update(Experiment, (exp.id,), status="running")
    print(f"[{dt.datetime.now():%H:%M:%S}] job {job_id} started (pid {os.getpid()})", flush=True)
    lease = None
    try:
        lease = _lease(store, job, spec)  # before anything initialises CUDA
        from backend.hub import local_checkpoints

        spec = local_checkpoints(spec)  # pinned hub names -> their snapshots, here on the driver before any task
        if job.kind == "rl":
            summary = {"experiment": run_training(store, spec, exp.id, Progress(store, job_id))}
        else:
            summary = run_pipeline(store, job_id, exp.id, spec)
    except BaseException as exc:
        traceback.print_exc()
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        store.update(Job, (job_id,), status="failed", error=f"{type(exc).__name__}: {first}")
        store.update(Experiment, (exp.id,), status="failed")
        raise
    finally:
        if lease:
            lease.release()
    print(f"[{dt.datetime.now():%H:%M:%S}] done: {json.dumps(summary)}", flush=True)
    store.update(Job, (job_id,), status="done", stage="done")
    store.update(Experiment, (exp.id,), status="done")


def _check_gpus_free(store: Store, spec) -> None:
    """A local job that would be refused GPUs is refused now, in one line, before any row is written."""
    from backend.gpus import gpus_wanted, lease_gpus, node_gpus

    count = gpus_wanted(spec)
    pool = node_gpus() if count and spec.gpu_busy == "refuse" else []
    if pool:
        lease_gpus(_leases(store), count, wait=False, pool=pool).release()


def _leases(store: Store) -> Path:
    return store.path.parent / "jobs" / "gpus"  # beside the jobs' logs


def _lease(store: Store, job: Job, spec):
    """A local job's GPUs (none on a node without any): CUDA_VISIBLE_DEVICES names them from here on."""
    from backend.gpus import gpus_wanted, lease_gpus, node_gpus

    count = gpus_wanted(spec)
    pool = node_gpus() if count else []
    if not pool:
        return None
    lease = lease_gpus(_leases(store), count, spec.gpu_busy == "wait", job.id, pool)
    print(f"GPU(s) {','.join(lease.gpus)} leased: CUDA_VISIBLE_DEVICES={','.join(lease.gpus)}", flush=True)
    return lease


def run_training(store: Store, spec, experiment_id: str, progress) -> str:
    """An RL job's body: here, or (executor "ray") as a Ray task asking for spec.gpus GPUs, so a
    cluster places it on a GPU node (backend/rl/remote.py: the task never opens the store). Either
    way it resumes from the newest checkpoint, and more than one GPU launches training processes
    with accelerate (backend/rl/launch.py)."""
    from backend.rl.trainer import run_rl

    if spec.executor == "local":
        return run_rl(store, spec, progress=False, experiment_id=experiment_id, job=progress)
    from backend.rl.remote import train_on_ray
    from backend.sweep.executors import connect_ray
    from backend.sweep.preflight import preflight
    from backend.sweep.ray_join import chosen_address

    ray = connect_ray(spec.ray_address)
    try:
        if ray.cluster_resources().get("GPU", 0) < spec.gpus:
            raise UserError(f"the Ray cluster has no node with {spec.gpus:g} GPU(s); set gpus to 0 to train on CPUs")
        if chosen_address(spec.ray_address)[0]:  # a user's cluster: the task may land where these are not
            preflight(ray, [spec.base], [spec.output_dir], spec.backend, None, ("torch", "trl"))
        return train_on_ray(ray, store, spec, experiment_id, progress)
    finally:
        ray.shutdown()


def observed(job: Job) -> Job:
    """What a job row means now, read-only: a running job whose process is gone has failed. Nothing
    is written, so the dashboard and `jobs list` never change a row; the job's own process, cancel
    and resume are the writers."""
    if job.status in ("running", "queued") and job.pid and not _alive(job.pid):
        return dataclasses.replace(
            job, status="failed", error=job.error or "the job's process died (killed or crashed); resume it"
        )
    return job


def stages(job: Job) -> dict[str, dict]:
    """The job's progress per stage (merge, rollout, judge), without its engine actors."""
    return {k: v for k, v in (job.progress or {}).items() if k != "actors"}


def actor_lines(job: Job) -> list[str]:
    """One line per engine actor of a Ray job: where it runs, what it samples, how fast."""
    lines = []
    for name, a in (job.progress or {}).get("actors", {}).items():
        where = f"{a.get('node', '?')} GPU {','.join(a['gpus'])}" if a.get("gpus") else a.get("node", "?")
        rate = f", {a['rate']:.2f} samples/s" if a.get("rate") else ""
        doing = f" {a['point']}" if a.get("state") == "sampling" else ""
        doing += f" ({a['cause']})" if a.get("state") == "died" and a.get("cause") else ""  # Ray's reason
        lines.append(f"{name} on {where}: {a.get('state', '?')}{doing}, {a['points']} point(s) done{rate}")
    return lines


def parameters(kind: str, spec: dict | None) -> list[tuple[str, str]]:
    """(title, value) of a stored spec's set fields, titled as the spec declares them; folders by
    name. Hidden fields (set by code only) and empty ones are left out."""
    model = SPECS.get(kind)
    if model is None or not spec:
        return []
    out, own = [], set(model.__annotations__)  # the job kind's own fields (endpoints, grid) first
    for name, field in sorted(model.model_fields.items(), key=lambda item: item[0] not in own):
        value = spec.get(name)
        extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
        if value in (None, "", [], {}) or (extra.get("form") is False and extra.get("cli") is False):
            continue
        if isinstance(value, bool):  # a card says "yes"/"no", never Python's False
            value = "yes" if value else "no"
        elif name == "problems":
            value = _problems_text(value, spec.get("limit"))
        elif isinstance(value, list):
            value = ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in value)
        elif isinstance(value, str) and "/" in value and Path(value).is_absolute():
            value = Path(value).name
        out.append((field.title or name, str(value)))
    return out


SHOWN_IDS = 3  # problem ids a card lists before it says how many more


def _problems_text(problems: list[str], limit: int | None) -> str:
    """ "2 of 40 picked (at most 2): a, b, c, … 37 more": what runs, not every id."""
    head = ", ".join(problems[:SHOWN_IDS]) + (
        f", … {len(problems) - SHOWN_IDS} more" if len(problems) > SHOWN_IDS else ""
    )
    if limit and limit < len(problems):
        return f"{limit} of {len(problems)} picked (at most {limit}): {head}"
    return f"{len(problems)} picked: {head}" if len(problems) > SHOWN_IDS else head


def eta_s(job: Job) -> float | None:
    """Seconds until a running job ends, by its slowest unfinished stage (the stages run side by
    side: judging follows sampling); None before any stage has measured its rate."""
    left = [p["eta_s"] for p in stages(job).values() if p.get("eta_s") and p.get("done", 0) < p.get("total", 0)]
    return max(left) if job.status == "running" and left else None


def elapsed_s(job: Job, now: dt.datetime | None = None) -> float | None:
    """Seconds since the job was created: until now while it runs, until its last update once it ended."""
    if job.created_at is None:
        return None
    end = (now or dt.datetime.now()) if job.status in ("running", "queued") else job.updated_at
    return max(0.0, ((end or job.created_at) - job.created_at).total_seconds())


def list_jobs(store: Store) -> list[Job]:
    return [observed(j) for j in store.select(Job, newest_first=True)]


def wait(store: Store, job_id: str, on_update: Callable[[Job], None] | None = None, poll_s: float = 0.5) -> Job:
    """Until the job ends; on_update(job) after every look (progress bars, a log line)."""
    while True:
        job = observed(get_job(store, job_id))
        if on_update:
            on_update(job)
        if job.status not in ("running", "queued"):
            return job
        time.sleep(poll_s)


def cancel(store: Store, job_id: str, grace_s: float = 2.0) -> Job:
    """Stop the job's whole process group (its pool workers and their sandboxes with it)."""
    job = get_job(store, job_id)
    if job.status not in ("running", "queued"):
        raise UserError(f"job {job_id} is {job.status}, not running")
    if job.pid and _alive(job.pid):
        pgid = os.getpgid(job.pid)
        os.killpg(pgid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and _group_alive(pgid):
            time.sleep(0.05)
        if _group_alive(pgid):
            os.killpg(pgid, signal.SIGKILL)
    store.update(Job, (job_id,), status="cancelled", error="cancelled by the user")
    return get_job(store, job_id)


def resume(store: Store, job_id: str, detach: bool = True) -> int:
    job = observed(get_job(store, job_id))
    if job.status in ("running", "queued") and job.pid and _alive(job.pid):
        raise UserError(f"job {job_id} is still running (pid {job.pid})")
    return start(store, job_id, detach)


def get_job(store: Store, job_id: str) -> Job:
    job = store.get(Job, job_id)
    if job is None:
        raise UserError(f"no job {job_id!r}; see `python -m backend jobs list`")
    return job


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _group_alive(pgid: int) -> bool:
    for p in psutil.process_iter():
        try:
            if os.getpgid(p.pid) == pgid and p.status() != psutil.STATUS_ZOMBIE:
                return True
        except (psutil.NoSuchProcess, ProcessLookupError, PermissionError):
            continue
    return False
