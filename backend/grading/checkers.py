"""Output checkers: token-exact (default), float tolerance, LiveCodeBench's line rules (`lcb`) and
functional rules (lcb.py), testlib-style special judges."""

from __future__ import annotations

import math

from backend.errors import UserError
from backend.grading import lcb


def parse_checker(spec: str) -> tuple[str, float]:
    """`exact`, `float`, `float:1e-6`, `lcb`, `functional`, or `special` (a testlib-style program)."""
    name, _, arg = spec.partition(":")
    if name == "float":
        try:
            return "float", float(arg) if arg else 1e-6
        except ValueError as exc:
            raise UserError(f"bad float tolerance in checker {spec!r}; use e.g. float:1e-6") from exc
    if name in CHECKERS:
        return name, 0.0
    raise UserError(f"unknown checker {spec!r}; use exact, float[:TOL], lcb, functional or a checker source path")


CHECKERS = ("exact", "float", "lcb", "functional", "special")


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


def check(kind: str, tol: float, expected: str, got: str) -> bool:
    if kind == "float":
        return floats(expected, got, tol)
    if kind == "lcb":
        return lcb.stdin_equal(expected, got)
    if kind == "functional":
        return lcb.functional_equal(expected, got)
    return exact(expected, got)


def short_diff(expected: str, got: str, limit: int = 300) -> str:
    """The first differing line of expected vs got, each side truncated: enough for a repair prompt."""
    exp_lines, got_lines = expected.splitlines(), got.splitlines()
    for i in range(max(len(exp_lines), len(got_lines))):
        e = exp_lines[i] if i < len(exp_lines) else "<missing>"
        g = got_lines[i] if i < len(got_lines) else "<missing>"
        if e.split() != g.split():
            half = limit // 2
            return f"line {i + 1}: expected {e[:half]!r}, got {g[:half]!r}"
    return ""
