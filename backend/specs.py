"""What every spec shares: its fields' presentation, and validation errors as one line.

A spec field declares everything about an option once: type, default, bounds and choices (the
annotation and `Field`), the form's label (`title`), the help text (its attribute docstring) and,
in `json_schema_extra`, a CLI flag other than `--field-name` (`cli`), the meaning of None in words
(`none`), or that code alone sets it (`HIDDEN`). `backend/cli/options.py` derives Typer options
from that and `dashboard/form.py` derives form widgets.

Each command's config declares every option it takes, flat, so one file shows them all; an option
that several commands take is declared in each config alike (tests/test_specs.py checks it).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from backend.errors import FieldError, UserError

HIDDEN = {"cli": False, "form": False}  # a field only code sets


def ordered_fields(model: type[BaseModel]) -> list[tuple[str, FieldInfo]]:
    """The spec's own fields first, then those of its bases: what a reader looks for first."""
    names: list[str] = []
    for cls in model.__mro__:
        for name in getattr(cls, "__annotations__", {}):
            if name in model.model_fields and name not in names:
                names.append(name)
    return [(n, model.model_fields[n]) for n in names]


def unwrap(annotation) -> tuple[Any, bool]:
    """(the type without None, whether None is allowed)."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return args[0], len(args) < len(typing.get_args(annotation))
    return annotation, False


def literal_choices(field: FieldInfo) -> tuple | None:
    base, _ = unwrap(field.annotation)
    return typing.get_args(base) if typing.get_origin(base) is Literal else None


def extra(field: FieldInfo) -> dict:
    return field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}


def cli_flag(name: str, field: FieldInfo) -> str:
    return extra(field).get("cli") or "--" + name.replace("_", "-")


def form_label(name: str, field: FieldInfo) -> str:
    return field.title or name.replace("_", " ")


def help_text(field: FieldInfo) -> str:
    return " ".join((field.description or "").split())


def bounds(field: FieldInfo) -> dict[str, float]:
    """{"ge": 1, "le": 1024}: the numeric bounds declared on the field."""
    out = {}
    for m in field.metadata:
        for key in ("ge", "gt", "le", "lt"):
            if getattr(m, key, None) is not None:
                out[key] = getattr(m, key)
    return out


def bounds_text(field: FieldInfo) -> str:
    signs = {"ge": "≥", "gt": ">", "le": "≤", "lt": "<"}
    parts = [
        f"{signs[k]} {int(v) if float(v).is_integer() else v:,}".replace(",", " ") for k, v in bounds(field).items()
    ]
    return f" [{', '.join(parts)}]" if parts else ""


def _reason(err: dict) -> str:
    ctx, kind = err.get("ctx", {}), err["type"]
    words = {
        "greater_than_equal": lambda: f"at least {ctx.get('ge')}",
        "less_than_equal": lambda: f"at most {ctx.get('le')}",
        "greater_than": lambda: f"must be more than {ctx.get('gt')}",
        "less_than": lambda: f"must be less than {ctx.get('lt')}",
        "too_short": lambda: "give at least one",
        "string_too_short": lambda: "required",
        "missing": lambda: "required",
        "literal_error": lambda: f"choose one of {ctx.get('expected')}",
    }
    if kind in words:
        return words[kind]()
    cause = ctx.get("error")
    return str(cause) if isinstance(cause, UserError) else err["msg"].removeprefix("Value error, ")


def validate_spec(cls: type[BaseModel], data: dict, label: Callable[[str, FieldInfo], str] | None = None) -> BaseModel:
    """Build a spec, turning its first validation error into one UserError line that names the
    field as the caller shows it: `label` is cli_flag for the CLI, form_label for a form. An error
    about one of the spec's fields is a FieldError, so a form shows it at that field; a spec's own
    rules raise FieldError themselves where one field is at fault."""
    try:
        return cls(**data)
    except UserError:
        raise
    except ValidationError as exc:
        err = exc.errors()[0]
        name = str(err["loc"][0]) if err["loc"] else ""
        field = cls.model_fields.get(name)
        where = (label or (lambda n, f: n))(name, field) if field else ".".join(str(x) for x in err["loc"])
        message = f"{where}: {_reason(err)}" if where else _reason(err)  # a whole-spec rule names its fields
        raise (FieldError(message, name) if field else UserError(message)) from None


def under_current_names(cls: type[BaseModel], stored: dict) -> dict:
    """A stored spec's fields as the spec names them today: only the spec's own "before" validators
    run (they rename fields that older versions stored), not its checks, which may read
    checkpoints; a form pre-filled from an old experiment then shows every value it had."""
    data = dict(stored)
    for decorator in cls.__pydantic_decorators__.model_validators.values():
        if decorator.info.mode == "before":
            data = decorator.func(data)
    return data


def options_table(commands: dict[str, list[tuple[type[BaseModel], tuple[str, ...]]]]) -> str:
    """docs/cli.md's table of job options, rendered from the specs ({command: [(spec, skipped)]}):
    one row per flag and default, listing the commands that take it. tests/test_specs.py checks
    that docs/cli.md holds exactly this text, so a default in the docs is the spec's."""
    rows: dict[tuple[str, str], dict] = {}
    for command, models in commands.items():
        for model, skip in models:
            for name, field in ordered_fields(model):
                if name in skip or extra(field).get("cli", True) is False:
                    continue
                default = "required" if field.is_required() else field.get_default(call_default_factory=True)
                choices = literal_choices(field) or extra(field).get("choices")
                limits = " \\| ".join(map(str, choices)) if choices else bounds_text(field).strip(" []")
                first = help_text(field).split(". ")[0].rstrip(".").replace("|", "\\|")  # a table cell
                flags = " ".join(f"`{f}`" for f in (cli_flag(name, field), *extra(field).get("aliases", ())))
                key = (flags, repr(default), first)
                row = rows.setdefault(key, {"commands": [], "limits": limits, "help": first, "default": default})
                row["commands"].append(command)
    lines = ["| option | default | bounds / choices | commands | what it is |", "|---|---|---|---|---|"]
    for (flag, _, _), row in rows.items():
        default = row["default"] if row["default"] not in (None, [], "") else "—"
        lines.append(f"| {flag} | {default} | {row['limits'] or ''} | {', '.join(row['commands'])} | {row['help']} |")
    return "\n".join(lines)
