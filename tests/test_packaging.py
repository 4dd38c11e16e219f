"""pyproject.toml declares what requirements.txt pins: `pip install -e .` installs the same set
that `make run`/`make test` install, `[gpu]` adds what requirements-gpu.txt adds, `[dev]` holds the
test tools, and `frontier-lab` is `python -m backend`."""

import subprocess
import sys
import sysconfig
import tomllib

import pytest
from packaging.requirements import Requirement

from tests.conftest import ROOT

DEV_TOOLS = {"pytest", "pytest-xdist", "ruff", "playwright", "msgpack"}  # `make test`'s tools, not the lab's


def requirements(path) -> dict[str, Requirement]:
    lines = (line.split("#")[0].strip() for line in path.read_text().splitlines())
    return {norm(r.name): r for r in map(Requirement, filter(None, lines))}


def norm(name: str) -> str:
    return name.lower().replace("_", "-")


def declared() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def by_name(specs: list[str]) -> dict[str, Requirement]:
    return {norm(r.name): r for r in map(Requirement, specs)}


def pin(r: Requirement) -> str:
    (spec,) = r.specifier
    assert spec.operator == "==", r
    return spec.version


def test_the_dependencies_are_requirements_txt_runtime_pins():
    cpu, gpu = requirements(ROOT / "requirements.txt"), requirements(ROOT / "requirements-gpu.txt")
    deps = by_name(declared()["dependencies"])
    assert set(deps) == set(cpu) - DEV_TOOLS
    for name, r in deps.items():
        assert r.extras == cpu[name].extras, name
        if pin(cpu[name]) == pin(gpu[name]):
            assert str(r.specifier) == f"=={pin(cpu[name])}", name  # the exact pin where both sets agree
        else:  # a range holding both sets' pins, so that [gpu] resolves to vLLM's versions
            assert r.specifier.contains(pin(cpu[name])) and r.specifier.contains(pin(gpu[name])), name


def test_the_extras_are_the_gpu_additions_and_the_test_tools():
    cpu, gpu = requirements(ROOT / "requirements.txt"), requirements(ROOT / "requirements-gpu.txt")
    extras = declared()["optional-dependencies"]
    assert {n: str(r) for n, r in by_name(extras["gpu"]).items()} == {n: str(r) for n, r in gpu.items() if n not in cpu}
    assert {n: str(r) for n, r in by_name(extras["dev"]).items()} == {n: str(cpu[n]) for n in DEV_TOOLS}


def test_the_console_script_is_python_m_backend():
    assert declared()["scripts"] == {"frontier-lab": "backend.cli:main"}
    assert (ROOT / "backend" / "__main__.py").read_text().strip() == "from backend.cli import main\n\nmain()"


@pytest.mark.slow
def test_pip_install_e_in_a_fresh_venv_gives_a_working_frontier_lab(tmp_path):
    """The install itself, offline: the fresh venv reads this environment's packages through a .pth
    (instead of downloading the pinned set again), and pip installs the clone with --no-deps."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    (site / "shared-packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    py = str(venv / "bin" / "python")
    install = subprocess.run([py, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index", "-e",
                              str(ROOT)], capture_output=True, text=True, timeout=300)  # fmt: skip
    assert install.returncode == 0, install.stderr[-2000:]
    shown = subprocess.run([str(venv / "bin" / "frontier-lab"), "--help"], cwd=tmp_path, capture_output=True, text=True,
                           timeout=120)  # fmt: skip
    assert shown.returncode == 0 and "Usage: frontier-lab" in shown.stdout and "sweep" in shown.stdout, shown.stderr
    where = subprocess.run([py, "-c", "import backend; print(backend.__file__)"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=60)  # fmt: skip
    assert where.stdout.strip() == str(ROOT / "backend" / "__init__.py")  # editable: this clone's code
