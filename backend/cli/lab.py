"""`python -m backend lab build|import|report|separation`: the miniature lab."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated

import typer

from backend.cli.jobs import watch
from backend.cli.options import DbOption, JsonOption, open_store
from backend.errors import UserError
from backend.lab.artifacts import ARTIFACTS, import_results

# no spec can hold this: where the committed artifacts are read from, like --db
FromOption = Annotated[Path, typer.Option("--from", help="Artifacts folder (its recipe.json names the lab's sweep).")]
lab_app = typer.Typer(help="The miniature lab: a tiny CPU model through the whole method.", no_args_is_help=True)
# no spec can hold this: where the artifacts go, like --db, not what the lab computes
OutOption = Annotated[Path | None, typer.Option("--out", help="Artifacts folder (default: artifacts/lab).")]


@lab_app.command("build")
def lab_build(
    # no spec can hold this: it picks which LabRecipe runs (the recipe is the spec, stored in recipe.json)
    smoke: Annotated[bool, typer.Option("--smoke", help="The scaled-down recipe (minutes, for CI).")] = False,
    # no spec can hold this: like --smoke, it picks which LabRecipe runs
    pilot: Annotated[
        bool, typer.Option("--pilot", help="Short GRPO runs and an endpoints-only sweep: the checks before a build.")
    ] = False,
    out: OutOption = None,
    # no spec can hold this: how progress is printed, not what the lab computes
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bars.")] = False,
) -> None:
    """Train, RL-tune, sweep, judge and report from scratch; writes checkpoints + Parquet results."""
    if smoke and pilot:
        raise UserError("--smoke and --pilot pick different recipes; give one of them")
    from backend.lab.build import build
    from backend.lab.recipe import LabRecipe

    recipe = LabRecipe.smoke() if smoke else LabRecipe.pilot() if pilot else LabRecipe()
    out = out or (ARTIFACTS.with_name("lab-smoke" if smoke else "lab-pilot") if smoke or pilot else ARTIFACTS)
    manifest = build(recipe, out, progress=not quiet, watch_job=None if quiet else watch)
    typer.echo(f"lab build done in {manifest['timings_s']['total']:.0f} s: {out}")
    typer.echo((out / "report.md").read_text())


@lab_app.command("import")
def lab_import(
    source: FromOption = ARTIFACTS,
    db: DbOption = None,
) -> None:
    """Load the committed lab results into the database (what `make run` does)."""
    began = time.perf_counter()
    counts = import_results(open_store(db), source)
    rows = ", ".join(f"{n} {name}" for name, n in counts.items())
    typer.echo(f"imported the miniature lab from {source} in {time.perf_counter() - began:.1f} s: {rows}")


@lab_app.command("report")
def lab_report(
    # no spec can hold this: AnalysisSpec's experiment is required, here it defaults to the lab's own
    experiment: Annotated[
        str | None, typer.Option("--experiment", help="Sweep experiment (default: the lab's).")
    ] = None,
    source: FromOption = ARTIFACTS,
    subset: Annotated[
        str | None,
        # no spec can hold this: which of the lab manifest's problem sets, like --from names the manifest
        typer.Option(
            "--subset", help="held-in, separating, held-out, withheld or kept (default: every problem swept)."
        ),
    ] = None,
    as_json: JsonOption = False,
    db: DbOption = None,
    # no spec can hold this: where the report goes, like --out, not what is computed
    write: Annotated[
        bool, typer.Option("--write", help="Rewrite the artifacts' report.md and report.json with this code.")
    ] = False,
) -> None:
    """Whether each of the paper's four findings shows in a sweep, with CIs over problems."""
    from backend.analysis.findings import findings
    from backend.analysis.findings_text import findings_table
    from backend.analysis.frame import to_outcomes
    from backend.lab.report import findings_by_subset

    manifest = _manifest(source) if experiment is None or subset else {}
    experiment = experiment or manifest["sweep_experiment"]
    store = open_store(db)
    counts = store.outcome_counts(experiment)
    if counts.is_empty():
        raise UserError(f"experiment {experiment} has no judged samples here; run `python -m backend lab import` first")
    if write:
        from backend.lab.problems import withheld_and_kept
        from backend.lab.report import subsets, write_report

        manifest = _manifest(source)
        sets = subsets(manifest) | withheld_and_kept(manifest)
        write_report(store.outcome_counts(manifest["sweep_experiment"]), sets, manifest["recipe"]["seed"], source)
        typer.echo(f"wrote {source / 'report.md'} and {source / 'report.json'}")
        return
    if subset:
        rows = findings_by_subset(counts, {subset: _subset(manifest, subset)}).get(subset)
        if rows is None:
            raise UserError(f"the sweep {experiment} evaluated none of the {subset} problems")
    else:
        rows = findings(to_outcomes(counts))
    typer.echo(json.dumps(rows, indent=1) if as_json else findings_table(rows))


def _manifest(source: Path) -> dict:
    path = source / "recipe.json"
    if not path.is_file():
        raise UserError(f"no lab manifest at {path}; pass --experiment or run `python -m backend lab build`")
    return json.loads(path.read_text())


def _subset(manifest: dict, name: str) -> list[str]:
    from backend.lab.problems import withheld_and_kept
    from backend.lab.report import subsets

    found = subsets(manifest) | withheld_and_kept(manifest)
    if name not in found:
        raise UserError(f"this lab has no {name} problems; it has: {', '.join(found)}")
    return found[name]


@lab_app.command("separation")
def lab_separation(
    # no spec can hold this: LabRecipe's `only`, a recipe field (the recipe is the lab's spec)
    only: Annotated[list[str] | None, typer.Option("--only", help="Builtin slug (repeatable; default: all).")] = None,
    # no spec can hold this: LabRecipe's `limit_runs`, its default read from the recipe
    runs: Annotated[
        int | None, typer.Option("--runs", min=1, help="Timed runs of each reference (default: the recipe's).")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Each lab problem's own CPU limit and whether its tests separate fast from slow code (what
    `lab build` measures and records; nothing is stored)."""
    from backend.lab.problems import lab_problems
    from backend.lab.recipe import LabRecipe
    from backend.lab.separation import separation, to_markdown

    recipe = LabRecipe(only=only or [])
    reports = separation(lab_problems(recipe), runs=runs or recipe.limit_runs, progress=True)
    typer.echo(json.dumps([r.as_dict() for r in reports], indent=1) if as_json else to_markdown(reports))


def register(app: typer.Typer) -> None:
    app.add_typer(lab_app, name="lab")
