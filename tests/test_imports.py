"""The import graph of backend/ and dashboard/: every import counts, the ones inside functions too,
since a lazy import only hides a cycle until the function runs."""

import ast
from pathlib import Path

from tests.conftest import ROOT

PACKAGES = ("backend", "dashboard")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            found[module_name(path)] = path
    return found


def imports_of(path: Path, known: set[str]) -> set[str]:
    """The project modules a file imports: `from a.b import c` names a.b.c when that is a module."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out |= {
                f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known else node.module for a in node.names
            }
    return {m for m in out if m in known}


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports_of(path, set(known)) - {name} for name, path in known.items()}


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_find_cycle_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_the_import_graph_has_no_cycle():
    assert find_cycle(graph()) is None, " → ".join(find_cycle(graph()))


def test_the_package_graph_has_no_cycle():
    """Stages as packages (backend.jobs, backend.rl, …): no two stages import each other."""
    packages: dict[str, set[str]] = {}
    for name, deps in graph().items():
        own = ".".join(name.split(".")[:2])
        packages.setdefault(own, set()).update(".".join(d.split(".")[:2]) for d in deps)
    assert find_cycle({p: d - {p} for p, d in packages.items()}) is None, " → ".join(
        find_cycle({p: d - {p} for p, d in packages.items()})
    )


def test_no_library_module_imports_the_cli():
    offenders = {m: sorted(d) for m, d in graph().items() if not m.startswith("backend.cli") and m != "backend.__main__"
                 for d in [{x for x in d if x.startswith("backend.cli")}] if d}  # fmt: skip
    assert offenders == {}


def test_the_dashboard_validates_forms_without_torch():
    """dashboard/launch.py's specs import no torch (a form check must not load a deep-learning stack)."""
    import subprocess
    import sys

    code = (
        "import sys, backend.sweep.spec, backend.rl.spec, backend.problems.lcb, backend.problems.ccplus, "
        "dashboard.form; print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_no_module_patches_streamlit_internals():
    """The dashboard uses Streamlit's public API only: nothing imports from streamlit.runtime (where
    a page once switched the pages-directory mode off by writing a private class attribute)."""
    sources = [ROOT / "app.py", *sorted((ROOT / "dashboard").glob("*.py"))]
    offenders = [p.name for p in sources if "streamlit.runtime" in p.read_text() or "PagesManager" in p.read_text()]
    assert offenders == []
