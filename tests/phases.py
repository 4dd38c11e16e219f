"""`make test` runs the suite in two phases (Makefile): the process-safe tests on pytest-xdist
workers, then the tests marked `serial` (and docker, stress) alone in one process. This plugin
records what each phase collected and ran, and its check proves that every collected test ran
exactly once across the phases: none dropped by the split, none run twice.

    pytest -p tests.phases --phase-log DIR/NAME ...   writes DIR/NAME.collected, DIR/NAME.ran
    python -m tests.phases DIR                        checks DIR's phases; exit 1 on any gap

NAME.collected: every test the phase collected, before `-m` deselected any (one node id a line).
NAME.ran: each test that ran, from its teardown report (pytest tears down every test it started,
skipped or failed ones too), written by the process that reports: xdist's controller, or the only
process when there are no workers.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from pathlib import Path

import pytest


def pytest_addoption(parser):
    parser.addoption("--phase-log", metavar="PATH", help="write PATH.collected and PATH.ran (tests/phases.py)")


def _log(config) -> Path | None:
    path = config.getoption("phase_log")
    return Path(path) if path else None


def _is_worker(config) -> bool:
    return hasattr(config, "workerinput")


def node_id(nodeid: str) -> str:
    """The test's own id: xdist's loadgroup appends `@group` to the ids it reports."""
    return nodeid[: nodeid.rindex("@")] if nodeid.rfind("@") > nodeid.rfind("]") else nodeid


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Before `-m` deselects: the whole suite as this phase sees it. Every xdist worker collects
    the same tests (xdist checks), so the first worker writes for all."""
    log = _log(config)
    if log is None or (_is_worker(config) and config.workerinput["workerid"] != "gw0"):
        return
    log.parent.mkdir(parents=True, exist_ok=True)
    partial = log.with_suffix(f".collected.{os.getpid()}")
    partial.write_text("".join(f"{node_id(item.nodeid)}\n" for item in items))
    partial.replace(log.with_suffix(".collected"))


def pytest_configure(config):
    log = _log(config)
    if log is not None and not _is_worker(config):
        config.pluginmanager.register(RanLog(log.with_suffix(".ran")), "phase-ran-log")


class RanLog:
    """Appends the id of each test whose teardown is reported (to this process: the controller
    under xdist, which hears every worker's reports)."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
        self.path = path

    def pytest_runtest_logreport(self, report):
        if report.when == "teardown":
            with self.path.open("a") as out:
                out.write(f"{node_id(report.nodeid)}\n")


def ids(path: Path) -> list[str]:
    return [node_id(line) for line in path.read_text().splitlines() if line]


def check(folder: Path) -> list[str]:
    """The problems of the phases logged in `folder`: [] when every test collected ran exactly once."""
    collected = {path.stem: set(ids(path)) for path in sorted(folder.glob("*.collected"))}
    ran = {path.stem: ids(path) for path in sorted(folder.glob("*.ran"))}
    if not collected or set(ran) != set(collected):
        return [f"{folder}: phases logged {sorted(collected)} collected and {sorted(ran)} ran; expected the same ones"]
    suite = next(iter(collected.values()))
    problems = [f"phase {name} collected {len(ids)} tests, another {len(suite)}"
                for name, ids in collected.items() if ids != suite]  # fmt: skip
    times = Counter(nodeid for ids in ran.values() for nodeid in ids)
    problems += [f"never ran: {nodeid}" for nodeid in sorted(suite - set(times))]
    problems += [f"ran {n} times: {nodeid}" for nodeid, n in sorted(times.items()) if n > 1]
    problems += [f"ran but not collected: {nodeid}" for nodeid in sorted(set(times) - suite)]
    return problems


def main(argv: list[str]) -> int:
    (folder,) = (Path(arg) for arg in argv)
    problems = check(folder)
    if problems:
        print(f"make test: {len(problems)} problem(s) with the phases' split:", *problems[:50], sep="\n  ")
        return 1
    counts = ", ".join(f"{len(ids(path))} {path.stem}" for path in sorted(folder.glob("*.ran")))
    suite = len(ids(next(folder.glob("*.collected"))))
    print(f"make test: each of the {suite} collected tests ran exactly once ({counts})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
