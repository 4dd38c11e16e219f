"""The product's Python source, parsed once per test run, for the tests that scan it for a rule
(α formatted in one home, outcome classes spelled in one home)."""

from __future__ import annotations

import ast
import functools

from tests.conftest import ROOT

PRODUCT = ("backend", "dashboard", "bench", "scripts")


@functools.cache
def product_modules() -> dict[str, ast.Module]:
    """Every module of the product (not the tests), by its path from the repository root."""
    paths = sorted([*(p for d in PRODUCT for p in (ROOT / d).rglob("*.py")), ROOT / "app.py"])
    return {str(p.relative_to(ROOT)): ast.parse(p.read_text()) for p in paths}


def offenders(find, skip=frozenset()) -> dict[str, list[int]]:
    """{module: lines} where `find(tree, path)` finds something, for every module not in `skip`."""
    return {path: lines for path, tree in product_modules().items() if path not in skip and (lines := find(tree, path))}
