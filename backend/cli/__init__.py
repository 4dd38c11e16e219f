"""`python -m backend ...`: every backend action, headless. Each top-level command or command group
lives in the module named after it (`judge` in judge.py, `jobs ...` in jobs.py); no library module
imports this package (tests/test_imports.py)."""

from __future__ import annotations

import sys

import typer

from backend.errors import UserError

app = typer.Typer(help="frontier-lab: weight-averaging sweeps for code RL, judged in a sandbox.", no_args_is_help=True)


@app.command("options-table", hidden=True)
def options_table_command() -> None:
    """Print docs/cli.md's table of job options, rendered from the specs."""
    from backend.cli.options import job_commands
    from backend.specs import options_table

    typer.echo(options_table(job_commands()))


def _register_stages() -> None:
    """Each command's module registers it here; the order is --help's (commands, then groups)."""
    from backend.cli import analyze, db, jobs, judge, lab, merge, power, problems, report, rl, rollout, samples, sweep
    from backend.cli import eval as eval_  # not to shadow the builtin

    for module in (db, problems, rollout, judge, merge, analyze, report, power, sweep, eval_, jobs, rl, lab, samples):
        module.register(app)


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
