"""Merge methods: one file per method, found here at import (see registry.py)."""

import importlib
import pkgutil

from backend.merge.methods.base import MergeMethod, as_f32
from backend.merge.methods.registry import DEFAULT, METHODS, by_mergekit_name, combine_into, get, names, register

_NOT_METHODS = {"base", "registry"}

for _module in pkgutil.iter_modules(__path__):
    if _module.name not in _NOT_METHODS and not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = [
    "DEFAULT",
    "METHODS",
    "MergeMethod",
    "as_f32",
    "by_mergekit_name",
    "combine_into",
    "get",
    "names",
    "register",
]
