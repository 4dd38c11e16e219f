"""Our own tiered benchmark. One module per problem, written by us; see docs/problems.md for the table.

Each module defines:
    TITLE, DIFFICULTY (easy|medium|hard), TAGS, STATEMENT, INPUT_SPEC, OUTPUT_SPEC
    TIME_LIMIT (CPU seconds, default 2.0), MEMORY_LIMIT (MB, default 256)
    REFERENCE   efficient Python solution (expected outputs come from it)
    BRUTE       correct but asymptotically slow
    BUGGY       list of plausible fast-but-wrong variants
    gen(target_len, seed) -> str   a valid input of about target_len characters, deterministic
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from types import ModuleType

BENCH = "builtin"


@dataclass
class BuiltinProblem:
    slug: str
    module: ModuleType
    tags: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{BENCH}/{self.slug}"

    @property
    def time_limit(self) -> float:
        return getattr(self.module, "TIME_LIMIT", 2.0)

    @property
    def memory_limit(self) -> int:
        return getattr(self.module, "MEMORY_LIMIT", 256)

    def programs(self) -> dict[str, list[str]]:
        """Its programs by kind: the reference, the brute force, the buggy variants."""
        return {"reference": [self.module.REFERENCE], "brute": [self.module.BRUTE], "buggy": list(self.module.BUGGY)}


def load_all() -> list[BuiltinProblem]:
    out = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if not info.name.startswith("_"):
            out.append(get(info.name.replace("_", "-")))
    return out


def get(slug: str) -> BuiltinProblem:
    module = importlib.import_module(f"{__name__}.{slug.replace('-', '_')}")
    return BuiltinProblem(slug, module, list(module.TAGS))
