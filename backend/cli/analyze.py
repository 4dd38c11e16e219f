"""`python -m backend analyze frontier|churn|passk|ensembles|findings|recovery|trend|checkpoints --experiment ID
...`: the options are AnalysisSpec's fields (backend/analysis/spec.py)."""

from __future__ import annotations

import inspect
import json
import sys
from typing import Annotated

import typer

from backend.analysis.spec import AnalysisSpec
from backend.cli.options import AS_CSV, AS_JSON, AS_LATEX, DB, open_store, spec_command
from backend.errors import UserError
from backend.outcomes import OutcomeClass
from backend.records import Experiment
from backend.vocab import Analysis, choices

WHAT = choices(Analysis)
# no spec can hold this: it names which analysis runs (a sub-command in all but name), not an option of it
ANALYSIS = inspect.Parameter(
    "what", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Annotated[str, typer.Argument(help=" | ".join(WHAT))]
)


@spec_command(AnalysisSpec, ANALYSIS, AS_JSON, AS_CSV, AS_LATEX, DB)
def analyze_command(spec: AnalysisSpec, what: str, as_json: bool, as_csv: bool, as_latex: bool, db) -> None:
    """Frontier table, churn, pass@k curves, matched-budget ensembles, the paper's four findings, the recovery of
    independent checkpoints, the failure shares' trend along α, or the checkpoint table with significance tiers,
    of one experiment (--since/--until or --window: only problems of that contest window)."""
    # numpy and polars load here, not with the module: `--help` answers at once (tests/test_cli_startup.py)
    import polars as pl

    from backend.analysis.churn import churn_stats, solve_matrix
    from backend.analysis.ensembles import empty_cells, passk_per_checkpoint
    from backend.analysis.frontier import format_causes, frontier_table
    from backend.analysis.recovery import recovery
    from backend.analysis.trend import trend

    if what not in WHAT:
        raise UserError(f"unknown analysis {what!r}; choose one of {', '.join(WHAT)}")
    store = open_store(db)
    if store.get(Experiment, spec.experiment) is None:
        raise UserError(
            f"no experiment {spec.experiment!r} in {store.path}; `python -m backend db info` counts what is there"
        )
    if as_latex and what != "checkpoints":
        raise UserError("--latex prints the checkpoint table: `analyze checkpoints --latex`")
    where = spec.sample_filter()
    prov = _provenance(store, spec, machine=as_json or as_csv or as_latex)
    o = _outcomes(store, spec.experiment, where)
    if what == "checkpoints":
        from backend.analysis.checkpoints import checkpoint_table, default_k, to_latex

        table = checkpoint_table(o, spec.k or default_k(o))
        if as_latex:
            typer.echo(to_latex(table, prov.lines()), nl=False)
        else:
            _emit(table if as_json or as_csv else _headline(table), as_json, as_csv)
    elif what == "findings":
        from backend.analysis.findings import FindingsSpec, findings
        from backend.analysis.findings_text import findings_table

        rows = findings(
            o, FindingsSpec(solved_at=spec.threshold, ensemble_k=spec.ensemble_k), opt_min_tier=spec.opt_min_tier
        )
        typer.echo(json.dumps(rows) if as_json else findings_table(rows))
    elif what == "frontier":
        causes = format_causes(store.format_causes(spec.experiment, where), spec.averaging)
        table = frontier_table(o, spec.averaging).join(causes, on="checkpoint_id", how="left")
        table = table.with_columns(pl.lit(spec.opt_min_tier, pl.Int64).alias("opt_min_tier"))  # the rule used
        errors = store.sandbox_errors(spec.experiment, where).select("checkpoint_id", "sandbox_errors")
        table = table.join(errors, on="checkpoint_id", how="left").with_columns(pl.col("sandbox_errors").fill_null(0))
        if not (as_json or as_csv):  # the terminal gets the headline columns; --json/--csv get all
            table = table.select(
                "label",
                "alpha",
                "point_kind",
                OutcomeClass.CORRECT,
                OutcomeClass.OPTIMIZATION_FAILURE,
                OutcomeClass.CORRECTNESS_FAILURE,
                OutcomeClass.FORMAT_FAILURE,
                "solve_rate",
                "solve_rate_lo",
                "solve_rate_hi",
                "sandbox_errors",
            )
        _emit(table, as_json, as_csv)
    elif what == "recovery":
        _emit(pl.DataFrame(recovery(o)), as_json, as_csv)
    elif what == "trend":
        result = trend(o)
        typer.echo(
            json.dumps(result) if as_json else f"{pl.DataFrame(result['slopes'])}\n{pl.DataFrame(result['bands'])}"
        )
    elif what == "passk":
        _emit(passk_per_checkpoint(o), as_json, as_csv)
        if empty := empty_cells(o):  # on stderr: --json/--csv stay one document; n_problems says it in them
            cells = ", ".join(f"{e['label']} on {e['problem_id']}" for e in empty)
            typer.echo(f"left out of the means (no judged sample): {cells}", err=True)
    elif what == "churn":
        stats = churn_stats(o, spec.threshold)
        if as_csv:
            _emit(solve_matrix(o), False, True)
        else:
            typer.echo(json.dumps(stats, indent=None if as_json else 2))
    else:
        _ensembles(o, spec, as_json, as_csv)


def _outcomes(store, experiment: str, where):
    """The experiment's outcomes under the filters; a contest window's problems without a date are
    counted in one line on stderr, and a window that leaves no problem is one error line."""
    from backend.analysis.frame import to_outcomes
    from backend.analysis.provenance import undated_words

    windowed = where.since or where.until
    dates = store.problem_dates(experiment, where) if windowed else None
    if dates and dates["undated"]:
        typer.echo(undated_words(dates["undated"]), err=True)
    counts = store.outcome_counts(experiment, where)
    if windowed and counts.is_empty():
        from backend.analysis.provenance import empty_window_words

        raise UserError(empty_window_words(where.since, where.until, dates))
    return to_outcomes(counts)


def _headline(table):
    """The checkpoint table's columns a terminal shows: the rest go to --json/--csv."""
    keep = ["label", "alpha", "tier", "problems", "pass_at_1", "pass_at_1_lo", "pass_at_1_hi", "k", "pass_at_k"]
    return table.select([c for c in keep if c in table.columns])


def _provenance(store, spec: AnalysisSpec, machine: bool):
    """How the numbers below were made (backend/analysis/provenance.py, the text the dashboard's
    exports carry): above the terminal's table, on stderr when stdout is JSON or CSV for a program
    (a LaTeX table carries it as % comments)."""
    from backend.analysis.provenance import from_store

    since, until = spec.dates()
    prov = from_store(
        store,
        spec.experiment,
        difficulty=spec.difficulty,
        platform=spec.platform,
        setting=spec.setting,
        since=since,
        until=until,
        opt_min_tier=spec.opt_min_tier,
        solved_at=spec.threshold,
        averaging=spec.averaging,
    ).stamped()
    typer.echo(prov.csv_header().rstrip("\n"), err=machine)
    return prov


def _ensembles(o, spec: AnalysisSpec, as_json: bool, as_csv: bool) -> None:
    import polars as pl

    from backend.analysis import ensembles as e
    from backend.analysis.churn import unique_solves, unique_solves_expected

    pools = e.standard_pools(o)
    for i, members in enumerate(spec.pool):
        ids = [m.strip() for m in members.split(",") if m.strip()]
        unknown = [m for m in ids if m not in o.checkpoints]
        if unknown:
            raise UserError(f"--pool names {unknown[0]!r}, which this experiment has not evaluated")
        pools[f"custom {i + 1}"] = ids
    table = e.gain_table(o, pools, greedy=True)
    kmax = int(table["k"].max())
    kept, excluded = e.sampled_problems(
        o, list(dict.fromkeys([*e.merged(o), *(m for ms in pools.values() for m in ms)])), 2
    )
    pools["greedy"] = e.greedy_pool(kept, kmax)  # the members the greedy rows' in-sample pass@k is of
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "gains": table.to_dicts(),
                    "pools": pools,
                    "unique_solves": unique_solves(o, spec.threshold),
                    "unique_solves_expected_if_alike": unique_solves_expected(o, spec.threshold),
                    "excluded_problems": excluded,
                }
            )
        )
    else:  # every k to --json/--csv; the terminal gets k ∈ {1, 10, 100, max}
        _emit(table if as_csv else table.filter(pl.col("k").is_in(e.headline_ks(kmax))), False, as_csv)


def _emit(frame, as_json: bool, as_csv: bool) -> None:
    import polars as pl

    if as_json:
        typer.echo(json.dumps(frame.to_dicts()))
    elif as_csv:
        frame.write_csv(sys.stdout)
    else:
        with pl.Config(tbl_rows=100, tbl_cols=20, float_precision=3):
            typer.echo(str(frame))


def register(app: typer.Typer) -> None:
    app.command("analyze")(analyze_command)
