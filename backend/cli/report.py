"""`python -m backend report --experiment ID --out FILE.html`: one experiment as one self-contained HTML
file that opens offline (the dashboard's own figures, tables and findings: dashboard/report.py)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from backend.cli.options import DbOption, open_store
from backend.errors import UserError
from backend.records import Experiment

# no spec can hold this: it names which experiment's report to write, not how any number is computed
ExperimentOption = Annotated[str, typer.Option("--experiment", help="Experiment id (see `db info` or `jobs list`).")]
# no spec can hold this: where the file goes
OutOption = Annotated[Path, typer.Option("--out", help="The HTML file to write (plotly.js inlined: opens offline).")]


def report_command(experiment: ExperimentOption, out: OutOption, db: DbOption = None) -> None:
    """Write one experiment's report: its frontier, churn, pass@k and checkpoint table, the findings
    in words with their CIs, its spec and provenance, in one HTML file that needs no server and
    prints as a paper-style PDF."""
    store = open_store(db)
    if store.get(Experiment, experiment) is None:
        raise UserError(
            f"no experiment {experiment!r} in {store.path}; `python -m backend db info` counts what is there"
        )
    if not out.parent.is_dir():
        raise UserError(f"{out.parent} is not a folder; create it or write the report elsewhere")
    os.environ["FLAB_DB"] = str(store.path)  # the figures name experiments from this database
    try:
        from dashboard.report import write_report
    except ImportError as err:
        raise UserError(f"report draws the dashboard's figures: run it from a frontier-lab checkout ({err})") from None
    import logging

    import streamlit  # noqa: F401  (its loggers are set up on import; then its caches, outside a server, say so)

    logging.getLogger("streamlit.runtime.caching.cache_data_api").setLevel(logging.ERROR)
    size = write_report(store.path, experiment, out)
    typer.echo(f"wrote {out} ({size / 1e6:.1f} MB, self-contained: open it in any browser, print it to PDF)")


def register(app: typer.Typer) -> None:
    app.command("report")(report_command)
