"""`python -m backend db init|info`: the embedded DuckDB database."""

from __future__ import annotations

import json

import typer

from backend.cli.options import DbOption, JsonOption, open_store

db_app = typer.Typer(help="The embedded DuckDB database.", no_args_is_help=True)


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


def register(app: typer.Typer) -> None:
    app.add_typer(db_app, name="db")
