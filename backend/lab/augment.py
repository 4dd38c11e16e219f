"""Semantics-preserving rewrites of a Python solution, so SFT does not see one fixed string per
problem: consistent renaming of the program's own names, equivalent idioms, and formatting.
Everything goes through `ast`, so a rewrite cannot change what the program computes."""

from __future__ import annotations

import ast
import builtins
import keyword
import random

NAME_POOL = [
    "a",
    "b",
    "c",
    "d",
    "i",
    "j",
    "k",
    "m",
    "n",
    "p",
    "q",
    "r",
    "s",
    "t",
    "u",
    "v",
    "w",
    "x",
    "y",
    "z",
    "val",
    "num",
    "cnt",
    "res",
    "ans",
    "acc",
    "cur",
    "best",
    "idx",
    "pos",
    "arr",
    "nums",
    "data",
    "items",
    "total",
    "left",
    "right",
    "lo",
    "hi",
    "mid",
    "seen",
    "stack",
    "queue",
    "graph",
    "dist",
    "tmp",
    "out",
    "size",
    "count",
    "result",
    "value",
    "key",
    "node",
    "edge",
    "limit",
    "prev",
    "nxt",
    "head",
    "tail",
]
RESERVED = set(dir(builtins)) | set(keyword.kwlist) | {"sys", "math", "heapq", "collections", "bisect", "itertools"}


def own_names(tree: ast.AST) -> set[str]:
    """Names the program binds itself (variables, functions, parameters), minus imports and any
    name used as a keyword argument (renaming a parameter would break `f(name=...)`)."""
    bound, kept = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            kept.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.keyword) and node.arg:
            kept.add(node.arg)
    return bound - kept - RESERVED


class _Rename(ast.NodeTransformer):
    def __init__(self, mapping: dict[str, str]):
        self.mapping = mapping

    def visit_Name(self, node):
        node.id = self.mapping.get(node.id, node.id)
        return node

    def visit_FunctionDef(self, node):
        node.name = self.mapping.get(node.name, node.name)
        return self.generic_visit(node)

    def visit_arg(self, node):
        node.arg = self.mapping.get(node.arg, node.arg)
        return node

    def visit_Global(self, node):
        node.names = [self.mapping.get(n, n) for n in node.names]
        return node

    visit_Nonlocal = visit_Global


class _Idioms(ast.NodeTransformer):
    """`x += y` <-> `x = x + y` for plain names, `range(0, n)` <-> `range(n)`, each with probability p."""

    def __init__(self, rng: random.Random, p: float = 0.3):
        self.rng, self.p = rng, p

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        if isinstance(node.target, ast.Name) and self.rng.random() < self.p:
            load = ast.Name(node.target.id, ast.Load())
            return ast.Assign([node.target], ast.BinOp(load, node.op, node.value), lineno=node.lineno)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        if not (isinstance(node.func, ast.Name) and node.func.id == "range") or node.keywords:
            return node
        if len(node.args) == 1 and self.rng.random() < self.p:
            node.args = [ast.Constant(0), node.args[0]]
        elif (
            len(node.args) == 2
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value == 0
            and self.rng.random() < self.p
        ):
            node.args = [node.args[1]]
        return node


def rename_map(names: set[str], rng: random.Random, p: float = 0.3) -> dict[str, str]:
    """Rename each name with probability p, to a fresh name that collides with nothing."""
    taken = set(names)
    mapping = {}
    for name in sorted(names):
        if rng.random() >= p:
            continue
        choices = [c for c in NAME_POOL if c not in taken]
        if not choices:
            break
        new = rng.choice(choices)
        mapping[name] = new
        taken.add(new)
    return mapping


def reformat(source: str, rng: random.Random) -> str:
    """With or without blank lines before top-level blocks. Indentation stays at 4 spaces: with 2
    or 4 at random (the first two builds), the tiny model mixed both within one program."""
    lines = source.splitlines()
    if rng.random() < 0.5:
        spaced = []
        for line in lines:
            if line.startswith(("def ", "for ", "while ", "if ")) and spaced and spaced[-1]:
                spaced.append("")
            spaced.append(line)
        lines = spaced
    return "\n".join(lines) + "\n"


def augment(source: str, rng: random.Random, rename_p: float = 0.3) -> str:
    """One random semantics-preserving variant of `source`; each of its own names is renamed with
    probability rename_p (0: names stay as written, which a tiny model can keep consistent)."""
    tree = ast.parse(source)
    tree = _Rename(rename_map(own_names(tree), rng, rename_p)).visit(tree)
    tree = ast.fix_missing_locations(_Idioms(rng).visit(tree))
    return reformat(ast.unparse(tree), rng)
