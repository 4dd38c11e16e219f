"""`python -m backend eval ...`: existing checkpoints sampled and judged as one job; the options are
EvalSpec's fields."""

from __future__ import annotations

import typer

from backend.cli.jobs import launch
from backend.cli.options import DB, DETACH, JOB_SKIP, open_store, spec_command
from backend.sweep.spec import EvalSpec


@spec_command(EvalSpec, DETACH, DB, skip=JOB_SKIP)
def eval_command(spec: EvalSpec, detach: bool = False, db=None) -> None:
    """Evaluate existing checkpoints (e.g. independently trained R_k runs) as one job."""
    launch(open_store(db), spec, detach)


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)
