"""make test's split into a parallel and a serial phase (tests/phases.py, Makefile): its check finds a
test that no phase ran, one that two ran, and reads xdist's `@group` ids as the test's own."""

import pytest

from tests.phases import check, node_id

SUITE = ["tests/a.py::t1", "tests/a.py::t2[x@y]", "tests/b.py::t3"]


def logs(folder, collected, parallel, serial):
    for name, ran in (("parallel", parallel), ("serial", serial)):
        (folder / f"{name}.collected").write_text("\n".join(collected) + "\n")
        (folder / f"{name}.ran").write_text("".join(f"{n}\n" for n in ran))
    return folder


def test_every_test_once_across_the_phases_passes(tmp_path):
    assert check(logs(tmp_path, SUITE, ["tests/a.py::t1@tests/a.py", "tests/b.py::t3"], ["tests/a.py::t2[x@y]"])) == []


@pytest.mark.parametrize(
    "parallel, serial, problem",
    [
        (["tests/a.py::t1"], ["tests/a.py::t2[x@y]"], "never ran: tests/b.py::t3"),
        (SUITE, ["tests/b.py::t3"], "ran 2 times: tests/b.py::t3"),
        (SUITE, ["tests/c.py::t4"], "ran but not collected: tests/c.py::t4"),
    ],
)
def test_a_gap_or_a_repeat_is_named(tmp_path, parallel, serial, problem):
    assert check(logs(tmp_path, SUITE, parallel, serial)) == [problem]


def test_a_phase_that_logged_nothing_is_a_problem(tmp_path):
    (tmp_path / "parallel.collected").write_text("tests/a.py::t1\n")
    assert check(tmp_path) and "expected the same ones" in check(tmp_path)[0]


def test_group_suffix_is_stripped_but_not_from_a_parameter():
    assert node_id("tests/a.py::t1@tests/a.py") == "tests/a.py::t1"
    assert node_id("tests/a.py::t2[x@y]") == "tests/a.py::t2[x@y]"
    assert node_id("tests/a.py::t2[x@y]@g") == "tests/a.py::t2[x@y]"
