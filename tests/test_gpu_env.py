"""requirements-gpu.txt is a complete, pinned set: what the CPU set installs, with the versions vLLM
0.31.0 and TRL 1.16 need where they differ. `make gpu-env-check` resolves it with pip (a dry run,
needing the package index); this test checks what can be checked offline."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def pins(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            bare = name.split("[")[0].split(">")[0].split("<")[0].strip().lower()
            out[bare] = version or line
    return out


def test_the_gpu_set_holds_everything_the_cpu_set_does_pinned():
    cpu, gpu = pins(ROOT / "requirements.txt"), pins(ROOT / "requirements-gpu.txt")
    assert set(cpu) <= set(gpu)
    assert gpu["vllm"] == "0.31.0" and gpu["trl"] == cpu["trl"] == "1.16.0"  # TRL 1.16 supports vllm <= 0.31.0
    assert gpu["torch"] == cpu["torch"] == "2.13.0"  # vLLM 0.31.0 pins torch 2.13.0
    assert gpu["transformers"].startswith("5.17.")  # vLLM 0.31.0: transformers < 5.18
    differ = {n for n in cpu if gpu[n] != cpu[n]}
    assert differ == {"transformers", "numpy"}, differ  # every other version is the CPU set's
    unpinned = {n for n, v in gpu.items() if not v[0].isdigit()}
    assert unpinned == {"aiohttp", "requests"}  # trl[vllm]'s own ranges


@pytest.mark.parametrize(
    "driver,said", [(None, "no NVIDIA driver found"), ("575.57.08", "driver 575.57.08 is older than 580")]
)
def test_make_gpu_env_first_checks_the_driver_in_one_line(tmp_path, driver, said):
    """torch 2.13.0 from PyPI is a CUDA 13.0 build (cuda-toolkit 13.0.3): it needs a driver >= 580."""
    import os
    import subprocess

    if driver:
        fake = tmp_path / "nvidia-smi"
        fake.write_text(f"#!/bin/sh\necho {driver}\n")
        fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}:/usr/bin:/bin"}
    done = subprocess.run(["make", "-s", "gpu-env", f"GPU_VENV={tmp_path / 'never'}"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode != 0 and done.stdout.strip().count("\n") == 0 and said in done.stdout
    assert not (tmp_path / "never").exists()  # nothing was built
