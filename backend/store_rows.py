"""How a record of backend/records.py becomes a row of the store and back: fields typed plain
`dict`/`list` are JSON text; a field typed with a dataclass (or a list of one) is a DuckDB STRUCT
(or LIST of STRUCT), which DuckDB hands back as dicts that become that dataclass again."""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json
import typing


@functools.cache
def _fields(cls: type) -> tuple[set[str], dict[str, type]]:
    """A record's fields stored as JSON text (typed plain dict or list), and those stored as a STRUCT
    or a LIST of STRUCT, with the dataclass each STRUCT is."""
    as_json, structs = set(), {}
    for name, hint in typing.get_type_hints(cls).items():
        for arg in typing.get_args(hint) or (hint,):
            if arg in (dict, list):
                as_json.add(name)
            elif dataclasses.is_dataclass(inner := (typing.get_args(arg) or (arg,))[0]):
                structs[name] = inner
    return as_json, structs


def json_fields(cls: type) -> set[str]:
    return _fields(cls)[0]


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
    as_json, structs = _fields(cls)
    for name in as_json:
        if row.get(name) is not None:
            row[name] = json.loads(row[name])
    for name, inner in structs.items():
        value = row.get(name)
        if isinstance(value, list):
            row[name] = [inner(**v) for v in value]
        elif value is not None:
            row[name] = inner(**value)
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in row.items() if k in names})
