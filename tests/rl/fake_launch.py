"""Stands in for `accelerate launch ... -m backend.rl.worker TASK` in the driver's tests: it keeps the
worker's contract (metrics.jsonl lines from rank 0, checkpoint-N folders with trainer_state.json
written last, resume from the last complete one, {"final": N} after output_dir/final) with tiny
real checkpoints instead of GRPO. FAKE_STOP_AT=k: die (status 1) after step k, leaving a torn
checkpoint-(k+1) behind, as a kill mid-save would."""

import json
import os
import pickle
import sys
from pathlib import Path

from backend.lab.tiny import make_tiny_checkpoint
from backend.rl.trainer import last_complete_checkpoint

task = pickle.loads(Path(sys.argv[1]).read_bytes())["task"]
spec, out = task.spec, Path(task.spec.output_dir)
resumed = last_complete_checkpoint(out)
first = int(Path(resumed).name.split("-")[1]) + 1 if resumed else 1
attempt = 2 if resumed else 1
stop_at = int(os.environ.get("FAKE_STOP_AT", 0))


def append(entry):
    with (out / "metrics.jsonl").open("a") as f:
        f.write(json.dumps(entry) + "\n")


for step in range(first, spec.steps + 1):
    append({"step": step, "values": {"loss": step / 10, "attempt": attempt}})
    if step % spec.save_steps == 0:
        folder = make_tiny_checkpoint(out / f"checkpoint-{step}", seed=step)
        (folder / "trainer_state.json").write_text(json.dumps({"global_step": step}))
    if step == stop_at:
        (out / f"checkpoint-{step + 1}").mkdir()  # torn: no trainer_state.json
        sys.exit(1)
make_tiny_checkpoint(out / "final", seed=1000)
append({"final": spec.steps})
