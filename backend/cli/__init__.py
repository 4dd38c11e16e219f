"""`python -m backend ...`: every backend action, headless. One module per stage's commands; no
library module imports this package (tests/test_imports.py)."""

from __future__ import annotations

import json
import sys

import typer

from backend.cli.options import DbOption, JsonOption, open_store
from backend.errors import UserError

app = typer.Typer(help="frontier-lab: weight-averaging sweeps for code RL, judged in a sandbox.", no_args_is_help=True)
db_app = typer.Typer(help="The embedded DuckDB database.", no_args_is_help=True)
app.add_typer(db_app, name="db")


@db_app.command("init")
def db_init(db: DbOption = None) -> None:
    """Create the database, or migrate an older one to the current schema."""
    store = open_store(db)
    typer.echo(f"{store.path}: schema v{store.schema_version()}")


@db_app.command("info")
def db_info(db: DbOption = None, as_json: JsonOption = False) -> None:
    """Print the database path, schema version and row counts."""
    store = open_store(db)
    info = {"path": str(store.path), "schema_version": store.schema_version(), "rows": store.counts()}
    if as_json:
        typer.echo(json.dumps(info))
        return
    typer.echo(f"path            {info['path']}\nschema version  v{info['schema_version']}")
    for table, n in info["rows"].items():
        typer.echo(f"{table:<15} {n}")


@app.command("options-table", hidden=True)
def options_table_command() -> None:
    """Print docs/cli.md's table of job options, rendered from the specs."""
    from backend.cli.options import job_commands
    from backend.specs import options_table

    typer.echo(options_table(job_commands()))


def _register_stages() -> None:
    """Each pipeline stage owns its sub-commands and registers them here."""
    from backend.cli import analysis as analysis_cli
    from backend.cli import jobs as jobs_cli
    from backend.cli import lab as lab_cli
    from backend.cli import merge as merge_cli
    from backend.cli import problems as problems_cli
    from backend.cli import rl as rl_cli
    from backend.cli import rollout as rollout_cli
    from backend.cli import sandbox as sandbox_cli

    problems_cli.register(app)
    rollout_cli.register(app)
    sandbox_cli.register(app)
    merge_cli.register(app)
    analysis_cli.register(app)
    jobs_cli.register(app)
    rl_cli.register(app)
    lab_cli.register(app)


def main() -> None:
    _register_stages()
    try:
        app(standalone_mode=False)
    except UserError as err:
        typer.echo(f"error: {err}", err=True)
        sys.exit(2)
    except (typer.Abort, KeyboardInterrupt):
        typer.echo("aborted", err=True)
        sys.exit(130)
    except typer.TyperException as exc:  # usage errors (a bad flag, value or choice) in non-standalone mode
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        typer.echo(f"error: {' '.join(message.replace('Value error, ', '').split())} (see --help)", err=True)
        sys.exit(2)
