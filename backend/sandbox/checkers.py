"""Output checkers: token-exact (default), float tolerance, functional (JSON ==), special judge."""

from __future__ import annotations

import json
import math

from backend.errors import UserError


def parse_checker(spec: str) -> tuple[str, float]:
    """`exact`, `float`, `float:1e-6`, `functional`, or `special` (a testlib-style program)."""
    name, _, arg = spec.partition(":")
    if name == "float":
        try:
            return "float", float(arg) if arg else 1e-6
        except ValueError as exc:
            raise UserError(f"bad float tolerance in checker {spec!r}; use e.g. float:1e-6") from exc
    if name in ("exact", "functional", "special"):
        return name, 0.0
    raise UserError(f"unknown checker {spec!r}; use exact, float[:TOL], functional or a checker source path")


def exact(expected: str, got: str) -> bool:
    return expected.split() == got.split()


def floats(expected: str, got: str, tol: float) -> bool:
    """Each token equal, or both numbers within absolute or relative tolerance."""
    exp, out = expected.split(), got.split()
    if len(exp) != len(out):
        return False
    for e, g in zip(exp, out, strict=True):
        if e == g:
            continue
        try:
            a, b = float(e), float(g)
        except ValueError:
            return False
        if not (math.isfinite(b) and abs(a - b) <= tol * max(1.0, abs(a))):
            return False
    return True


def _lists(x):
    if isinstance(x, tuple | list):
        return [_lists(v) for v in x]
    if isinstance(x, dict):
        return {k: _lists(v) for k, v in x.items()}
    return x


def functional(expected: str, got: str) -> bool:
    """LiveCodeBench functional tests: compare JSON values with ==, tuples as lists."""
    try:
        want = _lists(json.loads(expected))
        have = _lists(json.loads(got.strip().splitlines()[-1])) if got.strip() else object()
    except (json.JSONDecodeError, IndexError):
        return False
    return want == have


def check(kind: str, tol: float, expected: str, got: str) -> bool:
    if kind == "float":
        return floats(expected, got, tol)
    if kind == "functional":
        return functional(expected, got)
    return exact(expected, got)


FUNCTIONAL_HARNESS = """

def __flab_main():
    import json as _j, sys as _s
    def _norm(x):
        if isinstance(x, (list, tuple)):
            return [_norm(v) for v in x]
        if isinstance(x, dict):
            return {k: _norm(v) for k, v in x.items()}
        return x
    _args = [_j.loads(line) for line in _s.stdin.read().split("\\n") if line.strip()]
    print(_j.dumps(_norm(Solution().{func}(*_args))))

__flab_main()
"""


def functional_program(source: str, func_name: str) -> str:
    """Wrap a LeetCode-style class so it reads one JSON argument per line and prints the result."""
    return "from typing import *\n" + source + FUNCTIONAL_HARNESS.replace("{func}", func_name)
