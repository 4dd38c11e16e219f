"""RL on several GPUs: TRL's supported multi-GPU launch, driven by the job's process.

`accelerate launch` starts one GRPO training process per training GPU (backend/rl/worker.py). With
vllm_mode "server", `trl vllm-serve` first takes the first GPU and the trainers ask it for
completions. The job's process stays the only writer of the store (DuckDB has one writing process):
rank 0 appends each logged step to metrics.jsonl in output_dir, checkpoints land there as in one
process, and the driver below turns both into Metric and Checkpoint rows as they appear.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import psutil

from backend.errors import UserError
from backend.gpus import node_gpus
from backend.records import Job
from backend.rl.follow import Follower
from backend.rl.spec import RLSpec
from backend.rl.task import Task
from backend.store import Store

ROOT = Path(__file__).resolve().parents[2]  # the repository: `-m backend.rl.worker` resolves from here

TASK = ".task.pkl"  # the training task the launched processes read (written by the driver)
SERVER_START_S = 900.0  # vLLM loads the model and captures CUDA graphs before /health answers


@dataclasses.dataclass(frozen=True)
class Plan:
    """The processes of one launched run: argv and environment of each."""

    train_argv: list[str]
    train_env: dict[str, str]
    server_argv: list[str] | None = None
    server_env: dict[str, str] | None = None
    server_url: str | None = None
    group_port: int | None = None  # TRL's weight-sync group (vllm_group_port): this job's own, not TRL's fixed 51216


def check_devices(spec: RLSpec, gpus: list[str] | None = None) -> list[str]:
    """The GPUs the run takes, or one line saying why it cannot start here (before anything starts)."""
    from backend.rl.task import vllm_options

    gpus = node_gpus() if gpus is None else gpus
    if spec.launched and not gpus:
        raise UserError(f"gpus {spec.gpus:g} needs CUDA GPUs and this machine has none; use gpus 1 or 0 (CPU)")
    if spec.launched and spec.gpus > len(gpus):
        raise UserError(f"gpus {spec.gpus:g} but {len(gpus)} CUDA device(s) visible here ({','.join(gpus)})")
    vllm_options(spec)  # vLLM and CUDA present when use_vllm
    return gpus[: int(spec.gpus)] if spec.launched else gpus[:1]


def accelerate_config(spec: RLSpec, processes: int, bf16: bool) -> dict:
    """accelerate's config for the training processes: FSDP full shard (weights, gradients and Adam
    states split over the GPUs, float32 master weights, bf16 compute under mixed precision) or plain
    DDP. FSDP checkpoints its own activations (transformers refuses both kinds at once) and saves a
    full state dict, so checkpoint-N folders are whole models as in one process."""
    config = {
        "compute_environment": "LOCAL_MACHINE",
        "num_machines": 1,
        "machine_rank": 0,
        "num_processes": processes,
        "mixed_precision": "bf16" if bf16 else "no",
        "use_cpu": False,
        "dynamo_config": {"dynamo_backend": "NO"},
        "main_training_function": "main",
    }
    if spec.sharding == "ddp":
        return config | {"distributed_type": "MULTI_GPU"}
    return config | {
        "distributed_type": "FSDP",
        "fsdp_config": {
            "fsdp_version": 1,
            "fsdp_sharding_strategy": "FULL_SHARD",
            "fsdp_auto_wrap_policy": "TRANSFORMER_BASED_WRAP",
            "fsdp_backward_prefetch": "BACKWARD_PRE",
            "fsdp_forward_prefetch": False,
            "fsdp_state_dict_type": "FULL_STATE_DICT",
            "fsdp_offload_params": False,
            "fsdp_use_orig_params": True,
            "fsdp_cpu_ram_efficient_loading": True,
            "fsdp_sync_module_states": True,
            "fsdp_activation_checkpointing": spec.on_gpu(True)["gradient_checkpointing"],
        },
    }


def plan(
    spec: RLSpec,
    task_file: Path,
    gpus: list[str],
    main_port: int,
    server_port: int,
    config_file: Path | None = None,
    group_port: int | None = None,
) -> Plan:
    """accelerate's launch over the training GPUs with the run's config (written to config_file,
    by default beside the task file) and, in server mode, `trl vllm-serve` on the first."""
    import yaml

    server = spec.use_vllm and spec.vllm_mode == "server"
    trainers = gpus[1:] if server else gpus
    env = {"CUDA_VISIBLE_DEVICES": ",".join(trainers)}
    config_file = config_file or task_file.with_name("accelerate.yaml")
    config = accelerate_config(spec, len(trainers), spec.on_gpu(True)["bf16"])
    config_file.write_text(yaml.safe_dump(config, sort_keys=False))
    train = [
        sys.executable,
        "-m",
        "accelerate.commands.launch",
        "--config_file",
        str(config_file),
        "--num_processes",
        str(len(trainers)),
        "--main_process_ip",
        "127.0.0.1",
        "--main_process_port",
        str(main_port),
        "-m",
        "backend.rl.worker",
        str(task_file),
    ]
    if not server:
        return Plan(train, env)
    # 127.0.0.1: the server runs whatever its callers send; only this node's trainers talk to it
    serve = [
        sys.executable,
        "-m",
        "trl.scripts.vllm_serve",
        "--model",
        spec.base,
        "--host",
        "127.0.0.1",
        "--port",
        str(server_port),
        "--tensor_parallel_size",
        "1",
    ]
    return Plan(train, env, serve, {"CUDA_VISIBLE_DEVICES": gpus[0]}, f"http://127.0.0.1:{server_port}", group_port)


def run_launched(store: Store, task: Task, exp: str, job=None) -> None:
    """Launch the run's processes on this node's GPUs (the job's lease) and drive them to the end;
    a job's accelerate config is written beside its log."""
    from backend.rl.memory import plan_here

    spec = task.spec
    gpus = check_devices(spec)
    plan_here(spec)
    out = Path(spec.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    config_file = None
    if job is not None:
        log = store.get(Job, job.job_id).log_path
        if log and Path(log).parent.is_dir():  # a Ray task on another node has no such folder
            config_file = Path(log).with_suffix(".accelerate.yaml")
    # every port this job's own: two server-mode jobs on one node never meet on TRL's defaults
    the_plan = plan(spec, out / TASK, gpus, free_port(), free_port(), config_file, free_port())
    print(f"accelerate config: {the_plan.train_argv[the_plan.train_argv.index('--config_file') + 1]}", flush=True)
    write_task(out / TASK, task, the_plan.server_url, the_plan.group_port)
    drive(store, spec, exp, the_plan, job)


def write_task(path: Path, task: Task, server_url: str | None, group_port: int | None = None) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(pickle.dumps({"task": task, "server_url": server_url, "group_port": group_port}))
    os.replace(tmp, path)


def drive(store: Store, spec: RLSpec, exp: str, the_plan: Plan, job=None, poll_s: float = 1.0) -> None:
    """Run the plan's processes; store rank 0's metrics and register each complete checkpoint as they
    appear, then the final model (follow.py). Any way out of here (end, error, `jobs cancel`'s TERM)
    stops every process it started, with all their descendants."""
    follower = Follower(store, spec, exp, job)
    status = run_plan(the_plan, follower.poll, poll_s)
    follower.finish(f"accelerate launch exited with status {status}; see the job's log" if status else None)


def run_plan(the_plan: Plan, on_poll, poll_s: float = 1.0) -> int:
    """Start the plan's processes (the vLLM server first, until it serves), call on_poll() every
    poll_s until the training processes end, and return their exit status; every process started
    here, with its descendants, is stopped on the way out."""
    tree, server = Tree(), None
    on_term = _stop_on_sigterm()
    try:
        if the_plan.server_argv:
            server = tree.add(_start(the_plan.server_argv, the_plan.server_env))
            wait_healthy(the_plan.server_url, server)
        trainer = tree.add(_start(the_plan.train_argv, the_plan.train_env))
        while True:
            finished = trainer.poll() is not None  # looked at before the last poll: nothing is missed
            tree.look()
            on_poll()
            if finished:
                return trainer.returncode
            if server and server.poll() is not None:
                raise RuntimeError(f"the vLLM server exited with status {server.returncode}; see the job's log")
            time.sleep(poll_s)
    finally:
        tree.stop()
        if on_term is not None:
            signal.signal(signal.SIGTERM, on_term)


def _stop_on_sigterm():
    """`jobs cancel` TERMs the job's process group, but torchrun starts each rank in a session of its
    own, out of the group's reach: TERM becomes an exception here, so `finally` stops the whole tree.
    Returns the handler it replaced (None off the main thread, where Python allows no handler)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def stop(signum, frame):
        raise SystemExit(128 + signum)

    return signal.signal(signal.SIGTERM, stop)


def wait_healthy(url: str, server: subprocess.Popen, timeout_s: float | None = None) -> None:
    """Until the vLLM server's /health answers 200 (the endpoint TRL's VLLMClient checks)."""
    timeout_s = SERVER_START_S if timeout_s is None else timeout_s
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(
                f"the vLLM server exited with status {server.returncode} before serving; see the job's log"
            )
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(2)
    raise RuntimeError(f"the vLLM server at {url} did not answer /health within {timeout_s:.0f}s")


def _start(argv: list[str], env: dict[str, str]) -> subprocess.Popen:
    # stdout/stderr inherited: the job's log holds the processes' output
    return subprocess.Popen(argv, cwd=ROOT, env=os.environ | env, stdin=subprocess.DEVNULL)


class Tree:
    """Every process the driver started and their descendants, as last seen: a rank whose parent
    died first (torchrun starts ranks in sessions of their own) is still known and stopped."""

    def __init__(self):
        self.started: list[subprocess.Popen] = []
        self.seen: dict[int, psutil.Process] = {}

    def add(self, proc: subprocess.Popen) -> subprocess.Popen:
        self.started.append(proc)
        self.look()
        return proc

    def look(self) -> None:
        for proc in self.started:
            try:
                root = psutil.Process(proc.pid)
                for p in (root, *root.children(recursive=True)):
                    self.seen.setdefault(p.pid, p)
            except psutil.NoSuchProcess:
                continue

    def stop(self, grace_s: float = 10.0) -> None:
        """TERM, then KILL what is left after grace_s (psutil checks a pid still names the process seen)."""
        self.look()
        alive = []
        for p in self.seen.values():
            try:
                p.terminate()
                alive.append(p)
            except psutil.NoSuchProcess:
                continue
        for p in psutil.wait_procs(alive, timeout=grace_s)[1]:
            try:
                p.kill()
            except psutil.NoSuchProcess:
                continue
        for proc in self.started:
            proc.wait()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
