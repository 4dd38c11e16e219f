"""`python -m backend analyze frontier|churn|passk|ensembles|findings --experiment ID ...`"""

from __future__ import annotations

import json
import sys
from typing import Annotated

import polars as pl
import typer

from backend.analysis.churn import churn_stats, solve_matrix
from backend.analysis.ensembles import gain_ks, gain_table, greedy_pool, passk_curves, standard_pools, unique_solves
from backend.analysis.frame import SOLVED_AT, to_outcomes
from backend.analysis.frontier import AVERAGING, frontier_table
from backend.cli.options import DbOption, open_store
from backend.errors import UserError
from backend.records import Experiment

WHAT = ("frontier", "churn", "passk", "ensembles", "findings")


def analyze_command(
    what: Annotated[str, typer.Argument(help="frontier | churn | passk | ensembles | findings")],
    experiment: Annotated[str, typer.Option("--experiment", help="Experiment id (see `db info`).")],
    difficulty: Annotated[str | None, typer.Option("--difficulty")] = None,
    platform: Annotated[str | None, typer.Option("--platform")] = None,
    setting: Annotated[str | None, typer.Option("--setting")] = None,
    averaging: Annotated[str, typer.Option("--averaging", help="per_problem | per_sample (frontier)")] = "per_problem",
    threshold: Annotated[
        float, typer.Option("--threshold", help="Solved = pass rate at least this (churn, unique solves).")
    ] = SOLVED_AT,
    pool: Annotated[
        list[str] | None, typer.Option("--pool", help="Custom pool: comma-separated checkpoint ids (ensembles).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    as_csv: Annotated[bool, typer.Option("--csv")] = False,
    db: DbOption = None,
) -> None:
    """Frontier table, churn, pass@k curves, matched-budget ensembles or the paper's four findings of one experiment."""
    if what not in WHAT:
        raise UserError(f"unknown analysis {what!r}; choose one of {', '.join(WHAT)}")
    if averaging not in AVERAGING:
        raise UserError(f"--averaging must be one of {', '.join(AVERAGING)}")
    store = open_store(db)
    if store.get(Experiment, experiment) is None:
        raise UserError(
            f"no experiment {experiment!r} in {store.path}; `python -m backend db info` counts what is there"
        )
    counts = store.outcome_counts(experiment, difficulty=difficulty, platform=platform, setting=setting)
    o = to_outcomes(counts)
    if what == "findings":
        from backend.analysis.findings import findings_table
        from backend.lab.report import findings

        rows = findings(o)
        typer.echo(json.dumps(rows) if as_json else findings_table(rows))
    elif what == "frontier":
        table = frontier_table(o, averaging)
        if not (as_json or as_csv):  # the terminal gets the headline columns; --json/--csv get all
            table = table.select("label", "alpha", "point_kind", "correct", "optimization_failure", "correctness_failure",
                                 "format_failure", "solve_rate", "solve_rate_lo", "solve_rate_hi")  # fmt: skip
        _emit(table, as_json, as_csv)
    elif what == "passk":
        _emit(passk_curves(o), as_json, as_csv)
    elif what == "churn":
        stats = churn_stats(o, threshold)
        if as_csv:
            _emit(solve_matrix(o), False, True)
        else:
            typer.echo(json.dumps(stats, indent=None if as_json else 2))
    else:
        pools = standard_pools(o, 1)
        pools["greedy"] = greedy_pool(o, gain_ks(o)[-1])
        for i, members in enumerate(pool or []):
            ids = [m.strip() for m in members.split(",") if m.strip()]
            unknown = [m for m in ids if m not in o.checkpoints]
            if unknown:
                raise UserError(f"--pool names {unknown[0]!r}, which this experiment has not evaluated")
            pools[f"custom {i + 1}"] = ids
        table = gain_table(o, pools)
        if as_json:
            typer.echo(
                json.dumps({"gains": table.to_dicts(), "pools": pools, "unique_solves": unique_solves(o, threshold)})
            )
        else:
            _emit(table, False, as_csv)


def _emit(frame: pl.DataFrame, as_json: bool, as_csv: bool) -> None:
    if as_json:
        typer.echo(json.dumps(frame.to_dicts()))
    elif as_csv:
        frame.write_csv(sys.stdout)
    else:
        with pl.Config(tbl_rows=100, tbl_cols=20, float_precision=3):
            typer.echo(str(frame))


def register(app: typer.Typer) -> None:
    app.command("analyze")(analyze_command)
