"""Start a local Docker daemon and build the sandbox image, for the docker backend's tests."""

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def ensure_daemon_and_image() -> str:
    started = subprocess.run([ROOT / "scripts/start_dockerd.sh"], capture_output=True, text=True, timeout=120)
    if started.returncode != 0:
        pytest.fail(f"could not start a Docker daemon: {started.stderr.strip()}")
    have = subprocess.run(["docker", "image", "inspect", "frontier-lab-sandbox:latest"], capture_output=True)
    if have.returncode != 0:
        built = subprocess.run([ROOT / "scripts/build_sandbox_image.sh"], capture_output=True, text=True, timeout=600)
        if built.returncode != 0:
            pytest.fail(f"could not build the sandbox image: {built.stderr.strip()[-500:]}")
    return "frontier-lab-sandbox:latest"
