"""The job's side of a training run that happens elsewhere (launched training processes, or a Ray
task on another node): the job's process stays the store's only writer, and turns what the run
writes into output_dir into rows as it appears: rank 0's metrics.jsonl lines become Metric rows,
each complete checkpoint-N a Checkpoint row, and the final model the last one. Nothing else travels
between them, so the run's node needs no database (the driver's `db/` may not exist there).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from backend.errors import UserError
from backend.records import Metric
from backend.rl.spec import RLSpec
from backend.rl.task import complete_checkpoints, register_checkpoint

if TYPE_CHECKING:
    from backend.store import Store

METRICS = "metrics.jsonl"  # rank 0's lines: {"step": N, "values": {...}}, then {"final": N} after saving final
# (or {"stopped": LINE} when the disk guard stopped the run before a save)


class MetricsTail:
    """Reads the lines rank 0 appended since the last read; a line still being written waits."""

    def __init__(self, path: Path):
        self.path, self.offset = path, 0
        self.step: int | None = None
        self.final: int | None = None
        self.stopped: str | None = None

    def read(self) -> list[tuple[int, dict[str, float]]]:
        try:
            with self.path.open("rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return []
        whole = data[: data.rfind(b"\n") + 1]
        self.offset += len(whole)
        steps = []
        for line in whole.decode().splitlines():
            entry = json.loads(line)
            if "final" in entry:
                self.final = entry["final"]
            elif "stopped" in entry:  # the disk guard's line (backend/rl/checkpoints.py)
                self.stopped = entry["stopped"]
            else:
                steps.append((entry["step"], entry["values"]))
                self.step = entry["step"]
        return steps


class Follower:
    """Rows for a run's output_dir as it grows; `poll()` while the run goes on, `finish()` once it ended."""

    def __init__(self, store: Store, spec: RLSpec, exp: str, job=None):
        self.store, self.spec, self.exp, self.job = store, spec, exp, job
        self.out = Path(spec.output_dir)
        self.metrics = MetricsTail(self.out / METRICS)
        self.registered: set[int] = set()
        if job:
            job.set_total("train", spec.steps)
            done = complete_checkpoints(self.out)
            if done:  # resumed: those steps are not this run's speed
                job.reuse("train", done[-1][0])

    def poll(self) -> None:
        rows = [Metric(self.exp, step, k, v) for step, values in self.metrics.read() for k, v in values.items()]
        self.store.put(rows)  # keyed by (experiment, step, name): a step logged again after a resume replaces it
        if self.job and self.metrics.step is not None:
            self.job.reached("train", self.metrics.step)
        for step, folder in complete_checkpoints(self.out):
            if step not in self.registered:
                register_checkpoint(self.store, folder, self.spec, self.exp, step)
                self.registered.add(step)

    def finish(self, failure: str | None = None) -> None:
        """After the run ended (`failure`: how, if it did not end well): its final model registered,
        or the disk guard's line, the failure or the missing final model as one error."""
        self.poll()
        if self.metrics.stopped:
            raise UserError(self.metrics.stopped)
        if failure:
            raise RuntimeError(failure)
        if self.metrics.final is None:
            raise RuntimeError(f"the training ended without saving {self.out / 'final'}")
        register_checkpoint(self.store, self.out / "final", self.spec, self.exp, self.metrics.final)
