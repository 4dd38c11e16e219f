"""`python -m backend sweep ...`: an α sweep as one resumable job; the options are SweepSpec's fields."""

from __future__ import annotations

import typer

from backend.cli.jobs import launch
from backend.cli.options import DB, DETACH, JOB_SKIP, open_store, spec_command
from backend.sweep.spec import SweepSpec


@spec_command(SweepSpec, DETACH, DB, skip=JOB_SKIP)
def sweep_command(spec: SweepSpec, detach: bool = False, db=None) -> None:
    """Merge θ_low/θ_high at every α, sample, judge and store: one resumable job."""
    launch(open_store(db), spec, detach)


def register(app: typer.Typer) -> None:
    app.command("sweep")(sweep_command)
