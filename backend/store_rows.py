"""How a record of backend/records.py becomes a row of the store and back: fields typed plain
`dict`/`list` are JSON text; a field typed with a dataclass (or a list of one) is a DuckDB STRUCT
(or LIST of STRUCT), which DuckDB hands back as dicts that become that dataclass again; a field
typed with an enumeration (Verdict, OutcomeClass) is stored as its text and read back as a member."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import functools
import json
import typing


class _Fields(typing.NamedTuple):
    as_json: set[str]  # typed plain dict or list: JSON text
    structs: dict[str, type]  # typed with a dataclass or a list of one: the dataclass each STRUCT is
    enums: dict[str, dict[str, enum.Enum]]  # typed with an enumeration: its members by their text
    names: frozenset[str]


@functools.cache
def _fields(cls: type) -> _Fields:
    as_json, structs, enums = set(), {}, {}
    for name, hint in typing.get_type_hints(cls).items():
        for arg in typing.get_args(hint) or (hint,):
            inner = (typing.get_args(arg) or (arg,))[0]
            if arg in (dict, list):
                as_json.add(name)
            elif dataclasses.is_dataclass(inner):
                structs[name] = inner
            elif isinstance(arg, type) and issubclass(arg, enum.Enum):
                enums[name] = {m.value: m for m in arg}
    return _Fields(as_json, structs, enums, frozenset(f.name for f in dataclasses.fields(cls)))


def json_fields(cls: type) -> set[str]:
    return _fields(cls).as_json


def to_row(record) -> dict:
    row = dataclasses.asdict(record)  # a STRUCT field's dataclass becomes a dict too: Arrow's struct
    for name in json_fields(type(record)):
        if row[name] is not None:
            row[name] = json.dumps(row[name])
    now = dt.datetime.now()
    for stamp in ("created_at", "updated_at"):
        if stamp in row and row[stamp] is None:
            row[stamp] = now
    return row


def from_row(cls: type, row: dict):
    typed = _fields(cls)
    for name in typed.as_json:
        if row.get(name) is not None:
            row[name] = json.loads(row[name])
    for name, inner in typed.structs.items():
        value = row.get(name)
        if isinstance(value, list):
            row[name] = _structs(inner, value)
        elif value is not None:
            row[name] = _structs(inner, [value])[0]
    _members(typed, [row])
    return cls(**{k: v for k, v in row.items() if k in typed.names})


def _structs(cls: type, values: list[dict]) -> list:
    """STRUCTs as DuckDB hands them back (exactly the dataclass's fields) as that dataclass: in one
    pass over a list, since a sample's tests are read by the thousand."""
    typed = _fields(cls)
    if typed.as_json or typed.structs:
        return [from_row(cls, v) for v in values]
    return [cls(**v) for v in _members(typed, values)]


def _members(typed: _Fields, rows: list[dict]) -> list[dict]:
    for name, members in typed.enums.items():
        for row in rows:
            if (text := row.get(name)) is not None:
                row[name] = members[text]
    return rows
