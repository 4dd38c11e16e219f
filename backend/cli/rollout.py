"""`python -m backend rollout ...`: sample a checkpoint on a problem set in one setting."""

from __future__ import annotations

import inspect

import typer

from backend.cli.options import DB, JOB_SKIP, open_store, spec_parameters, spec_values
from backend.records import Sample
from backend.rollout.run import run_rollout
from backend.rollout.spec import RolloutSpec, SamplingSpec
from backend.specs import cli_flag, validate_spec

SAMPLING = spec_parameters(SamplingSpec, skip=JOB_SKIP)
OWN = spec_parameters(RolloutSpec, skip=("sampling", "limits"))


def rollout_command(**options) -> None:
    """Sample n solutions per problem and store them (re-running the same command resumes)."""
    sampling = validate_spec(SamplingSpec, spec_values(SamplingSpec, options), cli_flag)
    spec = validate_spec(RolloutSpec, {**spec_values(RolloutSpec, options), "sampling": sampling}, cli_flag)
    store = open_store(options["db"])
    exp = run_rollout(store, spec)
    typer.echo(f"experiment {exp}: {store.count(Sample, {'experiment_id': exp})} samples stored")


rollout_command.__signature__ = inspect.Signature([*OWN, *SAMPLING, DB])
rollout_command.__annotations__ = {p.name: p.annotation for p in rollout_command.__signature__.parameters.values()}


def register(app: typer.Typer) -> None:
    app.command("rollout")(rollout_command)
