"""LiveCodeBench's grading rules, so that imported LCB problems get LCB's pass/fail.

Written from the behaviour of LCB's grader (`lcb_runner/evaluation/testing_util.py`); the rules
are listed as a table in docs/problems.md, and that table is the test (tests/problems/test_lcb_rules.py).

- Every Python program runs after LCB's import block (star-imports of the standard modules it
  names, plus `sys.setrecursionlimit(50000)`): `PRELUDE`, which the judge hands the sandbox
  apart from the program, to run once per program rather than in every test.
- stdin programs: a trailing `if __name__ == '__main__':` block is unwrapped, imports are hoisted
  and every other top-level statement becomes the body of one function that is called once (so
  `global` names a module variable, as in LCB). `SystemExit` ends the program cleanly.
- stdin comparison: both outputs are stripped and split on "\\n"; the line counts must be equal;
  each line must be equal after strip, or equal as lists of `Decimal`s.
- functional programs: `Solution().<fn>` when the source contains `class Solution`, else the
  module-level function `<fn>`; arguments are the JSON values of the input's lines; what the
  method prints is ignored; a top-level tuple becomes a list; the value must `==` the expected
  JSON value. Nested tuples stay tuples (so a list of tuples is wrong, as in LCB).

The expected outputs never enter the sandbox: a functional program prints its return value in a
type-preserving JSON encoding and the host compares.
"""

from __future__ import annotations

import ast
import json
import textwrap
from decimal import Decimal, InvalidOperation

MODULES = (
    "string",
    "re",
    "datetime",
    "collections",
    "heapq",
    "bisect",
    "copy",
    "math",
    "random",
    "statistics",
    "itertools",
    "functools",
    "operator",
    "io",
    "sys",
    "json",
)
# LCB star-imports these, then builtins (which restores open, etc.) and typing.
PRELUDE = (
    "".join(f"from {m} import *\n" for m in MODULES)
    + "from builtins import *\nfrom typing import *\n"
    + "".join(f"import {m}\n" for m in MODULES)
    + "sys.setrecursionlimit(50000)\n"
)


def _unwrap_main(body: list[ast.stmt]) -> list[ast.stmt]:
    last = body[-1] if body else None
    if isinstance(last, ast.If) and ast.unparse(last.test).strip() in (
        "__name__ == '__main__'",
        '__name__ == "__main__"',
    ):
        return body[:-1] + last.body
    return body


def stdin_program(source: str) -> str:
    """The program as LCB runs it, after PRELUDE. Source that does not parse is returned as it is (CE)."""
    try:
        body = _unwrap_main(ast.parse(source).body)
    except SyntaxError:
        return source
    imports = [s for s in body if isinstance(s, ast.Import | ast.ImportFrom)]
    rest = [s for s in body if not isinstance(s, ast.Import | ast.ImportFrom)]
    body_text = ast.unparse(ast.Module(body=rest, type_ignores=[])) or "pass"
    return (
        ast.unparse(ast.Module(body=imports, type_ignores=[]))
        + "\n\ndef __lcb_main():\n"
        + textwrap.indent(body_text, "    ")
        + "\n\ntry:\n    __lcb_main()\nexcept SystemExit:\n    pass\n"
    )


FUNCTIONAL_HARNESS = """

def __lcb_call():
    import io as _io, json as _json, os as _os, sys as _sys

    def _enc(x):
        # the type survives the trip: tuple vs list, dict keys of any type, other objects by name
        if x is None or isinstance(x, (bool, int, float, str)):
            return x
        if isinstance(x, list):
            return [_enc(v) for v in x]
        if isinstance(x, tuple):
            return {"__tuple": [_enc(v) for v in x]}
        if isinstance(x, dict):
            return {"__dict": [[_enc(k), _enc(v)] for k, v in x.items()]}
        return {"__other": type(x).__name__}

    _args = [_json.loads(line) for line in _sys.stdin.read().split("\\n")]
    _target = Solution() if "class Solution" in __lcb_source else globals()
    _fn = getattr(_target, "{func}") if not isinstance(_target, dict) else _target["{func}"]
    _real = _os.dup(1)
    _null = _os.open(_os.devnull, _os.O_WRONLY)
    _os.dup2(_null, 1)  # what the method prints is not its answer
    _sys.stdout = _io.TextIOWrapper(_os.fdopen(1, "wb", closefd=False))
    _value = _fn(*_args)
    _os.write(_real, _json.dumps(_enc(_value)).encode())

__lcb_call()
"""


def functional_program(source: str, func_name: str) -> str:
    """The call-based program as LCB runs it, after PRELUDE."""
    return source + f"\n__lcb_source = {source!r}\n" + FUNCTIONAL_HARNESS.replace("{func}", func_name)


class _Opaque:
    """A value that is not plain data (a set, a custom object): equal to nothing expected."""

    def __eq__(self, other):
        return False

    __hash__ = object.__hash__


def _dec(x):
    if isinstance(x, list):
        return [_dec(v) for v in x]
    if isinstance(x, dict):
        if "__tuple" in x:
            return tuple(_dec(v) for v in x["__tuple"])
        if "__dict" in x:
            try:
                return {_dec(k): _dec(v) for k, v in x["__dict"]}
            except TypeError:  # an unhashable key cannot come from real code; refuse it
                return _Opaque()
        return _Opaque()
    return x


def functional_equal(expected: str, got: str) -> bool:
    try:
        value = _dec(json.loads(got))
        want = json.loads(expected)
    except (ValueError, TypeError, RecursionError):
        return False
    if isinstance(value, tuple):  # LCB converts a top-level tuple only
        value = list(value)
    try:
        return bool(value == want)
    except Exception:
        return False


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.strip().split("\n")]


def _decimals(line: str) -> list[Decimal] | None:
    try:
        return [Decimal(token) for token in line.split()]
    except (InvalidOperation, ValueError):
        return None


def stdin_equal(expected: str, got: str) -> bool:
    want, have = _lines(expected), _lines(got)
    if len(want) != len(have):
        return False
    for w, h in zip(want, have, strict=True):
        if w == h:
            continue
        a, b = _decimals(h), _decimals(w)
        try:
            if a is None or b is None or a != b:
                return False
        except InvalidOperation:  # signalling NaN: LCB's grader fails the test
            return False
    return True
