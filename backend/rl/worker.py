"""One launched GRPO training process: `accelerate launch ... -m backend.rl.worker TASK_FILE`, and
the body of an RL run's Ray task (backend/rl/remote.py).

It never opens the store (the job's process is its only writer): rank 0 appends each logged step to
output_dir/metrics.jsonl, then {"final": step} once output_dir/final is saved; checkpoints land in
output_dir as in one process. It resumes from the last complete checkpoint-N there.
"""

from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path

from backend.errors import UserError
from backend.rl.follow import METRICS
from backend.rl.rewards import SandboxReward
from backend.rl.task import Task, vllm_options
from backend.rl.trainer import grpo_trainer, step_values, train


def train_to_files(task: Task, vllm: dict, use_cpu: bool) -> int:
    """Train the task; rank 0 writes what the job's process stores (backend/rl/follow.py). The disk
    guard's line is written too before its UserError goes on."""
    from transformers import TrainerCallback

    spec = task.spec
    out = Path(spec.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    reward = SandboxReward(task.judged, spec.reward, spec.backend)

    def append(entry: dict) -> None:
        with (out / METRICS).open("a") as f:  # one whole line per write: the driver reads whole lines only
            f.write(json.dumps(entry) + "\n")

    class ToFile(TrainerCallback):
        def on_log(self, args, state, control, logs=None, **kw):
            if state.is_world_process_zero:  # the reward summary is rank 0's share of the batch
                append({"step": state.global_step, "values": step_values(logs, reward)})

    trainer = grpo_trainer(task, [reward], vllm, use_cpu=use_cpu, progress=False, callbacks=[ToFile()])
    try:
        step = train(trainer, spec)
    except UserError as stopped:  # the disk guard: its line reaches the driver, which raises it
        if trainer.is_world_process_zero():
            append({"stopped": str(stopped)})
        raise
    finally:
        reward.close()  # this rank's judging pool
    trainer.accelerator.wait_for_everyone()  # final fully saved before the driver is told
    if trainer.is_world_process_zero():
        append({"final": step})
    return step


def main(task_file: str) -> None:
    loaded = pickle.loads(Path(task_file).read_bytes())  # written by this job's own driver
    task = loaded["task"]
    try:
        train_to_files(task, vllm_options(task.spec, loaded["server_url"], loaded.get("group_port")), use_cpu=False)
    except UserError:
        raise SystemExit(2) from None


if __name__ == "__main__":
    main(sys.argv[1])
