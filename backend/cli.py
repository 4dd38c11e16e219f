"""`python -m backend ...`: every backend action, headless. Stages register sub-commands here."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from backend.errors import UserError
from backend.store import Store, default_db_path

app = typer.Typer(help="frontier-lab: weight-averaging sweeps for code RL, judged in a sandbox.", no_args_is_help=True)
db_app = typer.Typer(help="The embedded DuckDB database.", no_args_is_help=True)
app.add_typer(db_app, name="db")

DbOption = Annotated[
    Path | None,
    typer.Option("--db", envvar="FLAB_DB", help="Database file (default: db/frontier.duckdb)."),
]


def open_store(db: Path | None) -> Store:
    return Store(db or default_db_path())


@db_app.command("init")
def db_init(db: DbOption = None) -> None:
    """Create the database, or migrate an older one to the current schema."""
    store = open_store(db)
    typer.echo(f"{store.path}: schema v{store.schema_version()}")


@db_app.command("info")
def db_info(db: DbOption = None, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Print the database path, schema version and row counts."""
    store = open_store(db)
    info = {"path": str(store.path), "schema_version": store.schema_version(), "rows": store.counts()}
    if as_json:
        typer.echo(json.dumps(info))
        return
    typer.echo(f"path            {info['path']}\nschema version  v{info['schema_version']}")
    for table, n in info["rows"].items():
        typer.echo(f"{table:<15} {n}")


def _register_stages() -> None:
    """Each pipeline stage owns its sub-commands and registers them here."""
    from backend.analysis import cli as analysis_cli
    from backend.jobs import cli as jobs_cli
    from backend.lab import cli as lab_cli
    from backend.merge import cli as merge_cli
    from backend.problems import cli as problems_cli
    from backend.rl import cli as rl_cli
    from backend.rollout import cli as rollout_cli
    from backend.sandbox import cli as sandbox_cli

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
    except Exception as exc:  # click usage errors arrive here in non-standalone mode
        import click

        if isinstance(exc, click.ClickException):
            exc.show()
            sys.exit(2)
        raise
