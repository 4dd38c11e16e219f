"""The executors and the judging pools stand behind their Protocols (sweep/executors.py's Executor,
grading/pool.py's Judging): every member a Protocol declares is on each implementation, a method
with the Protocol's parameters, a property as a property, an attribute declared, so the pipeline
calls whichever runs without knowing which."""

import inspect
import typing

import pytest

from backend.grading.pool import JudgePool, Judging, RayJudging
from backend.sweep.executors import Executor, LocalExecutor
from backend.sweep.pool import RayExecutor


def mismatches(protocol: type, impl: type) -> list[str]:
    """The Protocol's members that `impl` lacks or declares otherwise."""
    out = []
    for name in typing.get_type_hints(protocol):
        if name not in typing.get_type_hints(impl):
            out.append(f"attribute {name}")
    for name, member in vars(protocol).items():
        if name.startswith("_"):
            continue
        mine = inspect.getattr_static(impl, name, None)
        if isinstance(member, property):
            if not isinstance(mine, property):
                out.append(f"property {name}")
        elif not callable(mine) or list(inspect.signature(mine).parameters) != list(
            inspect.signature(member).parameters
        ):
            out.append(f"method {name}")
    return out


IMPLEMENTATIONS = [(Executor, LocalExecutor), (Executor, RayExecutor), (Judging, JudgePool), (Judging, RayJudging)]


@pytest.mark.parametrize(("protocol", "impl"), IMPLEMENTATIONS, ids=lambda c: c.__name__)
def test_each_implementation_has_its_protocols_members(protocol, impl):
    assert mismatches(protocol, impl) == []


def test_the_check_finds_a_missing_or_different_member():
    class Drifted:
        judging: int

        def submit(self, batch): ...  # renamed parameter

        def collect(self, block: bool = False): ...

        pending = 0  # not a property

    assert mismatches(Judging, Drifted) == ["method submit", "property pending", "method close"]
    assert mismatches(Executor, Drifted) == ["method merge", "method rollout_points", "method close"]
