"""`python -m backend samples import FILE`: samples made elsewhere, judged and stored as an experiment;
the options are SampleImportSpec's fields (backend/samples/spec.py)."""

from __future__ import annotations

import inspect
from typing import Annotated

import typer

from backend.cli.options import DB, open_store, spec_command
from backend.samples.spec import SampleImportSpec

samples_app = typer.Typer(
    help="Samples made elsewhere: import (judged and stored as an experiment).", no_args_is_help=True
)

FILE = inspect.Parameter(
    "file",
    inspect.Parameter.POSITIONAL_OR_KEYWORD,
    # no spec can hold this as a positional argument (spec fields are options): its value is SampleImportSpec.file
    annotation=Annotated[str, typer.Argument(help="JSONL samples or LiveCodeBench custom_evaluator JSON.")],
)


@spec_command(SampleImportSpec, FILE, DB, skip=("kind", "file"))
def import_command(spec: SampleImportSpec, file: str, db=None) -> None:
    """Judge and store a file of samples: our JSONL, or LiveCodeBench's custom_evaluator JSON as it is.
    The whole file is checked first: a bad one stores nothing. Importing the same file again adds nothing."""
    from backend.samples.importer import import_samples

    typer.echo(import_samples(open_store(db), spec).line())  # spec.file is `file`


def register(app: typer.Typer) -> None:
    samples_app.command("import")(import_command)
    app.add_typer(samples_app, name="samples")
