"""Typer options derived from a spec's fields (backend/specs.py): type, default, bounds, choices,
help and flag come from the field, so adding an option to a job means editing one field."""

from __future__ import annotations

import enum
import functools
import inspect
import typing
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from backend.specs import (
    bounds_text,
    cli_flag,
    extra,
    help_text,
    literal_choices,
    ordered_fields,
    unwrap,
    validate_spec,
)

if TYPE_CHECKING:  # the store imports duckdb and pyarrow: only a command that opens it loads them
    from backend.store import Store

# The options below are declared by hand, once, and shared: no spec can hold them, because they
# say where the data lives, how to print a result or whether to wait for a job, never what the
# command computes (a spec is stored with its job, and these would make two equal jobs differ).
DB_HELP = "Database file (default: db/frontier.duckdb)."
# no spec can hold this: see above
DbOption = Annotated[Path | None, typer.Option("--db", envvar="FLAB_DB", help=DB_HELP)]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]  # no spec can hold this: see above
CsvOption = Annotated[bool, typer.Option("--csv", help="Print CSV.")]  # no spec can hold this: see above
# no spec can hold this: see above
LatexOption = Annotated[bool, typer.Option("--latex", help="Print a LaTeX booktabs table (checkpoints).")]
DetachOption = Annotated[
    bool, typer.Option("--detach", help="Return at once; the job runs on.")  # no spec can hold this: see above
]


def keyword(name: str, annotation, default=None) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


DB = keyword("db", DbOption)
DETACH = keyword("detach", DetachOption, False)
AS_JSON = keyword("as_json", JsonOption, False)
AS_CSV = keyword("as_csv", CsvOption, False)
AS_LATEX = keyword("as_latex", LatexOption, False)


JOB_SKIP = ("kind", "stop", "allow_same_endpoints")  # set by code (the lab's smoke build), never typed
EXPORT_SKIP = ("difficulty", "limit")  # export() selects by bench and problem id only


def job_commands() -> dict:
    """Every command whose options come from specs, and those specs (docs/cli.md's options table;
    tests/test_specs.py checks that each command's --help shows the same fields)."""
    from backend.analysis.spec import AnalysisSpec
    from backend.grading.spec import JudgeSpec
    from backend.merge.spec import MergeConfig
    from backend.problems.ccplus import CCPlusFilter
    from backend.problems.lcb import LCBFilter
    from backend.problems.spec import BuiltinChoice, CalibrateSpec
    from backend.rl.spec import RLSpec
    from backend.rollout.spec import ProblemQuery, RolloutSpec, SamplingSpec
    from backend.samples.spec import SampleImportSpec
    from backend.sweep.spec import EvalSpec, SweepSpec

    return {
        "sweep": [(SweepSpec, JOB_SKIP)],
        "eval": [(EvalSpec, JOB_SKIP)],
        "rl": [(RLSpec, JOB_SKIP)],
        "rollout": [(RolloutSpec, ("sampling", "limits")), (SamplingSpec, JOB_SKIP)],
        "analyze": [(AnalysisSpec, ())],
        "merge": [(MergeConfig, ())],
        "judge": [(JudgeSpec, ())],
        "problems build-builtin": [(BuiltinChoice, ())],
        "problems calibrate": [(CalibrateSpec, ())],
        "problems import lcb": [(LCBFilter, ())],
        "problems import ccplus": [(CCPlusFilter, ())],
        "problems list": [(ProblemQuery, ())],
        "problems export": [(ProblemQuery, EXPORT_SKIP)],
        "samples import": [(SampleImportSpec, ("kind", "file"))],
    }


def open_store(db: Path | None) -> Store:
    from backend.store import Store, default_db_path

    return Store(db or default_db_path())


def parameter(name: str, field: FieldInfo) -> inspect.Parameter:
    base, optional = unwrap(field.annotation)
    # the spec checks the bounds (one line naming the flag); click's range errors would arrive as
    # tracebacks through Typer's own parsing
    options: dict = {"help": help_text(field) + bounds_text(field)}
    choices = literal_choices(field)  # a field's suggested `choices` (e.g. rewards) stay free text here
    if choices:  # Typer shows an Enum as a choice list; the command gets the value back
        base = enum.Enum(f"{name}_choices", {str(c): str(c) for c in choices}, type=str)
    elif typing.get_origin(base) is list:
        base = list[str]  # repeatable; a list of floats (the α grid) is typed as text
        if extra(field).get("text"):
            base = str
    required = field.is_required()
    default = ... if required else field.get_default(call_default_factory=True)
    if choices and default not in (None, ...):
        default = base(str(default))
    if base == list[str]:
        default = None if not required else ...
    annotation = Annotated[
        (base | None) if optional or default is None else base,
        # the mechanism, not a hand-written option ("no spec can hold this" is moot: every spec field's
        # option is made here); `aliases` keep a renamed flag working
        typer.Option(cli_flag(name, field), *extra(field).get("aliases", ()), **options),  # the mechanism
    ]
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


def spec_parameters(model: type[BaseModel], skip: tuple[str, ...] = ()) -> list[inspect.Parameter]:
    return [
        parameter(name, field)
        for name, field in ordered_fields(model)
        if name not in skip and extra(field).get("cli", True) is not False
    ]


def spec_values(model: type[BaseModel], typed: dict) -> dict:
    """The values Typer passed for `model`'s fields (other parameters are left out), as the spec
    takes them: a choice Enum as its value, an omitted repeatable option as []."""
    values = {}
    for name, value in typed.items():
        if name not in model.model_fields:
            continue
        if isinstance(value, enum.Enum):
            value = value.value
        elif value is None and typing.get_origin(unwrap(model.model_fields[name].annotation)[0]) is list:
            value = []
        values[name] = value
    return values


def spec_command(model: type[BaseModel], *extras: inspect.Parameter, skip: tuple[str, ...] = ()) -> Callable:
    """Decorate `body(spec, **extras)`: the command's options are the spec's fields plus `extras`;
    the spec arrives validated, its errors naming the flags the user typed."""

    def wrap(body: Callable) -> Callable:
        positional = [p for p in extras if p.kind is not inspect.Parameter.KEYWORD_ONLY]  # e.g. a PATH argument
        params = positional + spec_parameters(model, skip) + [p for p in extras if p not in positional]

        @functools.wraps(body)
        def command(*args, **kwargs):
            # Typer passes keywords; a caller in Python may pass the arguments by position and leave
            # options out, which then take their declared defaults
            kwargs.update(zip((p.name for p in positional), args, strict=False))
            spec = validate_spec(model, spec_values(model, kwargs), cli_flag)
            return body(spec, **{p.name: kwargs.get(p.name, p.default) for p in extras})

        command.__signature__ = inspect.Signature(params)
        command.__annotations__ = {p.name: p.annotation for p in params}
        del command.__wrapped__  # Typer reads the signature above, not the body's
        return command

    return wrap
