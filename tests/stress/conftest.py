"""The stress suite's load (CPU hogs on every core, memory churn) and its figures line."""

import multiprocessing as mp
import os

import pytest

FIGURES: dict[str, dict] = {}  # backend -> {"runs", "flips", "p99_wall_s"}


def _burn() -> None:
    while True:
        pass


def _churn() -> None:
    """Allocate, touch and free 512 MB over and over: page faults, zeroing and reclaim beside
    the judged programs."""
    while True:
        block = bytearray(512 << 20)
        del block


@pytest.fixture
def machine_under_load():
    """One CPU hog per core and one memory churner, killed when the test ends."""
    ctx = mp.get_context("fork")
    load = [ctx.Process(target=_burn, daemon=True) for _ in range(os.cpu_count() or 2)]
    load.append(ctx.Process(target=_churn, daemon=True))
    for proc in load:
        proc.start()
    try:
        yield len(load) - 1
    finally:
        for proc in load:
            proc.kill()
            proc.join()


@pytest.fixture(scope="session")
def docker_ready():
    from tests.sandbox.docker_daemon import ensure_daemon_and_image

    return ensure_daemon_and_image()


def pytest_terminal_summary(terminalreporter):
    for backend, fig in sorted(FIGURES.items()):
        terminalreporter.write_line(
            f"stress [{backend}]: {fig['runs']} runs, {fig['flips']} flips, "
            f"p99 judge wall per program (6 tests) under load {fig['p99_wall_s']:.2f} s (repeats: {fig['repeats']})"
        )
