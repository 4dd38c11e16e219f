"""An RL run as a Ray task (`rl --executor ray`): the job's process reads the store and prepares the
task (problems, tests, prompts: backend/rl/task.py), Ray places the training where spec.gpus GPUs
are, and the job's process follows what the run writes into output_dir (backend/rl/follow.py).

The task never opens the database: the node it lands on may not hold the driver's `db/` (Ray ships
the code without it), and DuckDB has one writing process, the job's. Its folders (the base
checkpoint, output_dir) must be ones every node sees: the preflight checks them first.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from backend.errors import UserError
from backend.records import Experiment
from backend.rl.follow import Follower
from backend.rl.spec import RLSpec
from backend.rl.task import Task, cuda_available, prepare, vllm_options

if TYPE_CHECKING:
    from backend.store import Store

POLL_S = 1.0


def train_task(task: Task) -> None:
    """On the node Ray chose: train, writing metrics.jsonl and checkpoints into output_dir. More than
    one GPU: accelerate's training processes on this node's GPUs, as a local job launches them."""
    spec = task.spec
    if spec.launched:
        from backend.rl.launch import TASK, check_devices, free_port, plan, run_plan, write_task
        from backend.rl.memory import plan_here

        gpus = check_devices(spec)
        plan_here(spec)
        out = Path(spec.output_dir)
        out.mkdir(parents=True, exist_ok=True)
        the_plan = plan(spec, out / TASK, gpus, free_port(), free_port(), None, free_port())
        write_task(out / TASK, task, the_plan.server_url, the_plan.group_port)
        status = run_plan(the_plan, lambda: None)
        if status:
            raise RuntimeError(f"accelerate launch exited with status {status} on this node; see the job's log")
        return
    from backend.rl.worker import train_to_files

    use_cpu = spec.gpus == 0 or not cuda_available()
    if not use_cpu:  # the GPU Ray gave this task is the first visible one
        from backend.rl.memory import plan_here

        plan_here(spec)
    train_to_files(task, vllm_options(spec), use_cpu)


def train_on_ray(ray, store: Store, spec: RLSpec, experiment_id: str, job=None) -> str:
    """The run as a Ray task asking for spec.gpus GPUs; its metrics and checkpoints stored here as
    they appear. Returns the experiment id."""
    from backend.sweep.ray_errors import cause

    exp, task = prepare(store, spec, experiment_id)
    follower = Follower(store, spec, exp, job)
    ref = ray.remote(num_gpus=spec.gpus)(train_task).remote(task)
    while not ray.wait([ref], timeout=POLL_S)[0]:
        follower.poll()
    failure = None
    try:
        ray.get(ref)
    except ray.exceptions.RayTaskError as exc:
        follower.poll()
        if isinstance(exc.cause, UserError) and not follower.metrics.stopped:
            raise exc.cause from None
        failure = cause(exc)  # the task's own reason; its traceback is in the job's log
    follower.finish(failure)
    store.update(Experiment, (exp,), status="done")
    return exp
