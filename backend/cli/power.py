"""`python -m backend power ...`: before a sweep, the power of each finding's test; the options are
PowerSpec's fields (backend/analysis/spec.py)."""

from __future__ import annotations

import json

import typer

from backend.analysis.spec import PowerSpec
from backend.cli.options import AS_JSON, spec_command


@spec_command(PowerSpec, AS_JSON)
def power_command(spec: PowerSpec, as_json: bool) -> None:
    """Before a sweep: how often each finding would show an effect of the given size with this many
    problems, samples and α (power, by simulated sweeps), and how often it shows with no effect."""
    from tqdm import tqdm

    from backend.analysis.power import ensemble_line, power, power_table

    with tqdm(total=2 * spec.runs, desc="simulated sweeps", unit="sweep") as bar:
        tick = lambda done, total: bar.update(1)  # noqa: E731  (one counter for both runs)
        detail: dict = {}
        effect, null = power(spec, progress=tick, ensemble=detail), power(spec.null(), progress=tick)
    line = ensemble_line(detail, spec.problems)
    if as_json:
        typer.echo(json.dumps({"effect": effect, "null": null, "ensemble": line}))
    else:
        typer.echo(power_table(effect, null) + "\n\n" + line)


def register(app: typer.Typer) -> None:
    app.command("power")(power_command)
