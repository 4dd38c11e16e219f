"""`python -m backend rl ...`: a GRPO run with a sandbox reward, as a job."""

from __future__ import annotations

from pathlib import Path

import typer

from backend.cli.jobs import launch
from backend.cli.options import DB, DETACH, JOB_SKIP, open_store, spec_command
from backend.rl.spec import RLSpec


@spec_command(RLSpec, DETACH, DB, skip=JOB_SKIP)
def rl_command(spec: RLSpec, detach: bool = False, db=None) -> None:
    """Train with TRL's GRPOTrainer as a job (detach, cancel, resume from the last checkpoint);
    the reward is the sandbox judge's R_k or partial credit."""
    spec = spec.model_copy(update={"output_dir": str(Path(spec.output_dir).resolve())})
    if spec.executor == "local":  # refused here, not inside the started job
        from backend.rl.launch import check_devices

        check_devices(spec)  # GPUs, CUDA and vLLM as the spec asks
    launch(open_store(db), spec, detach)


def register(app: typer.Typer) -> None:
    app.command("rl")(rl_command)
