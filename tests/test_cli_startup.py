"""A CLI that starts at once: no command imports torch, transformers, vLLM, Ray, the data libraries
(numpy, polars, duckdb, pyarrow, scipy, pandas), Streamlit or the hub client until it runs a step
that needs them. Checked on the imports (`python -X importtime`), not on the clock (the clock is
bench/cli_startup.py's)."""

import subprocess
import sys

import pytest

from tests.conftest import ROOT

HEAVY = ("torch", "transformers", "vllm", "ray", "trl", "numpy", "polars", "duckdb", "pyarrow", "scipy", "pandas",
         "streamlit", "huggingface_hub")  # fmt: skip


def imported(stderr: str) -> set[str]:
    """Module names from `python -X importtime` output (one 'import time: self | cumulative | name' line each)."""
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2 and "[us]" not in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


def heavy(names: set[str]) -> list[str]:
    return sorted(n for n in names if n.split(".")[0] in HEAVY)


def importtime(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-X", "importtime", "-m", "backend", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def test_imported_reads_importtime_lines():
    sample = "import time: self [us] | cumulative | imported package\nimport time:  12 |  30 |   torch.nn\n"
    assert imported(sample) == {"torch.nn"} and heavy(imported(sample)) == ["torch.nn"]


@pytest.mark.parametrize("args", [("--help",), ("sweep", "--help"), ("problems", "import", "lcb", "--help")])
def test_help_imports_no_heavy_library(args):
    result = importtime(*args)
    assert result.returncode == 0, result.stderr[-2000:]
    names = imported(result.stderr)
    assert "backend.cli.merge" in names  # every stage's commands were registered
    assert heavy(names) == []


@pytest.mark.slow
def test_judge_help_and_a_judged_program_import_no_heavy_library(tmp_path):
    assert heavy(imported(importtime("judge", "--help").stderr)) == []
    code, tests = tmp_path / "p.py", tmp_path / "t.jsonl"
    code.write_text("print(int(input()) * 2)\n")
    tests.write_text('{"input": "21\\n", "output": "42\\n"}\n')
    result = importtime("judge", "--code", str(code), "--tests", str(tests), "--json")
    assert '"verdict": "AC"' in result.stdout, result.stderr[-2000:]
    assert heavy(imported(result.stderr)) == []


HELP_OF_EVERY_COMMAND = """
import sys
import typer
from typer.testing import CliRunner
from backend.cli import _register_stages, app

_register_stages()

def paths(command, prefix=()):
    yield prefix
    for name, sub in getattr(command, "commands", {}).items():
        yield from paths(sub, (*prefix, name))

runner, seen = CliRunner(), []
for path in paths(typer.main.get_command(app)):
    result = runner.invoke(app, [*path, "--help"])
    assert result.exit_code == 0, (path, result.output)
    seen.append(" ".join(path))
print(len(seen), sorted(m for m in sys.modules if m.split(".")[0] in {heavy}))
"""


@pytest.mark.slow
def test_help_of_every_command_imports_no_heavy_library():
    """Every command and sub-command's --help, in one process: none of them pulls a heavy library."""
    script = HELP_OF_EVERY_COMMAND.replace("{heavy}", repr(set(HEAVY)))
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    count, modules = result.stdout.strip().split(" ", 1)
    assert int(count) >= 25, result.stdout  # the walk reached the sub-commands
    assert modules == "[]"
