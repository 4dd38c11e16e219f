"""`python -m backend problems ...`: build the builtin set, import LiveCodeBench / CodeContests+
from local files, list, show and export."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Annotated

import typer

from backend.cli.options import DB, DbOption, open_store, spec_command
from backend.errors import UserError
from backend.problems.ccplus import CCPlusFilter
from backend.problems.importing import run_import
from backend.problems.lcb import LCBFilter
from backend.records import Problem, Test

app = typer.Typer(help="Problem sets: builtin tiered benchmark, LiveCodeBench, CodeContests+.", no_args_is_help=True)
import_app = typer.Typer(help="Import a public set from local files.", no_args_is_help=True)
app.add_typer(import_app, name="import")


@app.command("build-builtin")
def build_builtin_command(
    db: DbOption = None, only: Annotated[list[str] | None, typer.Option("--only")] = None
) -> None:
    """Generate (or load from cache) the builtin tiered problems and store them."""
    from backend.problems.build import build_builtin

    built = build_builtin(open_store(db), only=only)
    typer.echo(f"{len(built)} builtin problems, {sum(len(t) for _, t in built)} tests stored")


@app.command("calibrate")
def calibrate_command(
    bench: Annotated[
        str, typer.Option("--bench", help="builtin: our calibration claims; ccplus: the dataset's own labels")
    ] = "builtin",
    only: Annotated[list[str] | None, typer.Option("--only")] = None,
    path: Annotated[
        Path | None, typer.Option("--path", help="ccplus: the dataset (its submissions are read from there)")
    ] = None,
    config: Annotated[str, typer.Option("--config", help="ccplus: 1x…5x")] = "1x",
    sample: Annotated[int, typer.Option("--sample", help="ccplus: problems to check", min=1)] = 20,
    per_problem: Annotated[
        int, typer.Option("--per-problem", help="ccplus: correct and incorrect submissions each", min=1)
    ] = 5,
    db: DbOption = None,
) -> None:
    """Check the judge: builtin problems against their calibration claims, or CodeContests+
    against the dataset's own correct/incorrect submissions (prints the agreement rate)."""
    if bench == "ccplus":
        from backend.problems.calibrate import calibrate_ccplus

        if path is None:
            raise UserError("calibrate --bench ccplus needs --path to the dataset, where its submissions are")
        report = calibrate_ccplus(open_store(db), path, sample, per_problem, config)
        for pid, (agree, total) in sorted(report.per_problem.items()):
            typer.echo(f"{'ok  ' if agree == total else 'DIFF'} {pid:<40} {agree}/{total} agree")
        for pid, correct, verdict in report.disagreements[:10]:
            typer.echo(f"  {pid}: labelled {'correct' if correct else 'incorrect'}, judged {verdict}")
        skipped = ", ".join(f"{n} {lang}" for lang, n in sorted(report.skipped_languages.items()))
        typer.echo(f"agreement {report.rate:.1%} over {sum(n for _, n in report.per_problem.values())} submissions"
                   + (f"; skipped (language not judged): {skipped}" if skipped else ""))  # fmt: skip
        return
    if bench != "builtin":
        raise UserError(f"calibrate knows --bench builtin or ccplus, not {bench!r}")
    from backend.problems.build import build_builtin
    from backend.problems.calibrate import calibrate

    reports = calibrate(build_builtin(open_store(db), only=only))
    for r in reports:
        typer.echo(
            f"{'ok  ' if r.ok else 'FAIL'} {r.problem_id:<40} ref {r.ref_max_cpu_s:5.2f}s  {'; '.join(r.failures)}"
        )
    bad = [r for r in reports if not r.ok]
    if bad:
        raise UserError(f"{len(bad)} of {len(reports)} problems fail calibration")


def path_argument(what: str) -> inspect.Parameter:
    return inspect.Parameter("path", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                             annotation=Annotated[Path, typer.Argument(help=what)])  # fmt: skip


@import_app.command("lcb")
@spec_command(LCBFilter, path_argument("Folder with test*.jsonl (or a datasets folder, or one file)."), DB)
def import_lcb(flt: LCBFilter, path: Path, db=None) -> None:
    """Import LiveCodeBench code_generation_lite (stdin and functional problems), judged by LCB's rules."""
    typer.echo(run_import(open_store(db), "lcb", path, flt))


@import_app.command("ccplus")
@spec_command(
    CCPlusFilter, path_argument("The dataset root (ccplus_1x … ccplus_5x folders), a config folder or a shard."), DB
)
def import_ccplus(flt: CCPlusFilter, path: Path, db=None) -> None:
    """Import CodeContests+ with its limits; every testlib checker is compiled now (cached)."""
    typer.echo(run_import(open_store(db), "ccplus", path, flt))


@app.command("list")
def list_command(
    bench: Annotated[str | None, typer.Option("--bench")] = None,
    difficulty: Annotated[str | None, typer.Option("--difficulty")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    db: DbOption = None,
) -> None:
    """List stored problems."""
    where = {k: v for k, v in (("bench", bench), ("difficulty", difficulty)) if v}
    problems = open_store(db).select(Problem, where)
    if as_json:
        keys = ("id", "title", "difficulty", "kind", "time_limit_s", "memory_limit_mb", "tags")
        typer.echo(json.dumps([{k: getattr(p, k) for k in keys} for p in problems]))
        return
    for p in problems:
        typer.echo(f"{p.id:<40} {p.difficulty or '-':<7} {p.kind:<10} {', '.join(p.tags or [])}")


@app.command("show")
def show_command(problem_id: str, db: DbOption = None) -> None:
    """Print a problem's statement, limits and test ladder."""
    store = open_store(db)
    p = store.get(Problem, problem_id)
    if p is None:
        raise UserError(f"no problem {problem_id!r}; see `python -m backend problems list`")
    tests = store.select(Test, {"problem_id": problem_id})
    typer.echo(
        f"{p.title}  [{p.id}]  {p.difficulty or ''}  {p.time_limit_s}s  {p.memory_limit_mb} MB  checker={p.checker}\n"
    )
    typer.echo(p.statement)
    for label, text in (("Input", p.input_spec), ("Output", p.output_spec)):
        if text:
            typer.echo(f"\n{label}: {text}")
    typer.echo(f"\n{len(tests)} tests: " + ", ".join(f"tier {t.tier} ({t.input_len})" for t in tests))


@app.command("export")
def export_command(
    out: Annotated[Path, typer.Option("--out", help="Folder for problems.jsonl and tests/<id>.jsonl")],
    bench: Annotated[str | None, typer.Option("--bench")] = None,
    problem: Annotated[list[str] | None, typer.Option("--problem")] = None,
    db: DbOption = None,
) -> None:
    """Export problems to JSONL; each tests/*.jsonl file is what `judge --tests` accepts."""
    from backend.problems.export import export

    n = export(open_store(db), out, bench=bench, problem_ids=problem)
    typer.echo(f"exported {n} problems to {out}")


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="problems")
