"""`python -m backend problems ...`: build the builtin set, import LiveCodeBench / CodeContests+
from local files, list, show and export."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Annotated

import typer

from backend.cli.options import AS_JSON, DB, EXPORT_SKIP, DbOption, keyword, open_store, spec_command
from backend.errors import UserError
from backend.problems.ccplus import CCPlusFilter
from backend.problems.importing import HUB_REPOS, run_import
from backend.problems.lcb import LCBFilter
from backend.problems.spec import BuiltinChoice, CalibrateSpec
from backend.records import Problem, Test
from backend.rollout.spec import ProblemQuery

app = typer.Typer(help="Problem sets: builtin tiered benchmark, LiveCodeBench, CodeContests+.", no_args_is_help=True)
# no spec can hold this: where the files go, like --db, not which problems are exported
OUT = keyword("out", Annotated[Path, typer.Option("--out", help="Folder for problems.jsonl and tests/<id>.jsonl")], ...)
import_app = typer.Typer(
    help="Import a public set: by name from the hub (--hub) or from local files.", no_args_is_help=True
)
app.add_typer(import_app, name="import")


@app.command("build-builtin")
@spec_command(BuiltinChoice, DB)
def build_builtin_command(spec: BuiltinChoice, db=None) -> None:
    """Generate (or load from cache) the builtin tiered problems and store them."""
    from backend.problems.build import build_builtin

    built = build_builtin(open_store(db), only=spec.only or None)
    typer.echo(f"{len(built)} builtin problems, {sum(len(t) for _, t in built)} tests stored")


@app.command("calibrate")
@spec_command(CalibrateSpec, DB)
def calibrate_command(spec: CalibrateSpec, db=None) -> None:
    """Check the judge: builtin problems against their calibration claims, or CodeContests+
    against the dataset's own correct/incorrect submissions (prints the agreement rate)."""
    if spec.bench == "ccplus":
        from backend.problems.calibrate import calibrate_ccplus

        report = calibrate_ccplus(open_store(db), spec.path, spec.sample, spec.per_problem, spec.config)
        for pid, (agree, total) in sorted(report.per_problem.items()):
            typer.echo(f"{'ok  ' if agree == total else 'DIFF'} {pid:<40} {agree}/{total} agree")
        for pid, correct, verdict in report.disagreements[:10]:
            typer.echo(f"  {pid}: labelled {'' if correct else 'in'}correct, judged {verdict}")
        skipped = ", ".join(f"{n} {lang}" for lang, n in sorted(report.skipped_languages.items()))
        typer.echo(
            f"agreement {report.rate:.1%} over {sum(n for _, n in report.per_problem.values())} submissions"
            + (f"; skipped (language not judged): {skipped}" if skipped else "")
        )
        return
    from backend.problems.build import build_builtin
    from backend.problems.calibrate import calibrate

    reports = calibrate(build_builtin(open_store(db), only=spec.only or None))
    for r in reports:
        typer.echo(
            f"{'ok  ' if r.ok else 'FAIL'} {r.problem_id:<40} ref {r.ref_max_cpu_s:5.2f}s  {'; '.join(r.failures)}"
        )
    bad = [r for r in reports if not r.ok]
    if bad:
        raise UserError(f"{len(bad)} of {len(reports)} problems fail calibration")


def path_argument(what: str) -> inspect.Parameter:
    return inspect.Parameter(
        "path",
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        default=None,
        # no spec can hold this: where the files to import are, like --db, not which problems are kept
        annotation=Annotated[Path | None, typer.Argument(help=what)],
    )


HUB = keyword(
    "hub",
    Annotated[
        bool,
        # no spec can hold this: where the files come from, like PATH, not which problems are kept
        typer.Option(
            "--hub",
            help=f"Download the published files from the hub ({' or '.join(HUB_REPOS.values())}) instead of PATH.",
        ),
    ],
    False,
)


@import_app.command("lcb")
@spec_command(LCBFilter, path_argument("Folder with test*.jsonl (or a datasets folder, or one file)."), HUB, DB)
def import_lcb(flt: LCBFilter, path: Path | None = None, hub: bool = False, db=None) -> None:
    """Import LiveCodeBench code_generation_lite (stdin and functional problems), judged by LCB's rules."""
    typer.echo(run_import(open_store(db), "lcb", path, flt, hub=hub))


@import_app.command("ccplus")
@spec_command(
    CCPlusFilter,
    path_argument("The dataset root (ccplus_1x … ccplus_5x folders), a config folder or a shard."),
    HUB,
    DB,
)
def import_ccplus(flt: CCPlusFilter, path: Path | None = None, hub: bool = False, db=None) -> None:
    """Import CodeContests+ with its limits; every testlib checker is compiled now (cached)."""
    typer.echo(run_import(open_store(db), "ccplus", path, flt, hub=hub))


@app.command("list")
@spec_command(ProblemQuery, AS_JSON, DB)
def list_command(spec: ProblemQuery, as_json: bool = False, db=None) -> None:
    """List stored problems."""
    where = {k: v for k, v in (("bench", spec.bench), ("difficulty", spec.difficulty)) if v}
    problems = [p for p in open_store(db).select(Problem, where) if not spec.problems or p.id in spec.problems]
    problems = problems[: spec.limit]
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
@spec_command(ProblemQuery, OUT, DB, skip=EXPORT_SKIP)
def export_command(spec: ProblemQuery, out: Path, db=None) -> None:
    """Export problems to JSONL; each tests/*.jsonl file is what `judge --tests` accepts."""
    from backend.problems.export import export

    n = export(open_store(db), out, bench=spec.bench, problem_ids=spec.problems or None)
    typer.echo(f"exported {n} problems to {out}")


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="problems")
