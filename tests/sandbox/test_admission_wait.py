"""A judge never waits on host-memory reservations of its own (issue #47, "What the v2 run found",
item 4). A sandbox keeps its admission between tests; a special judge's checker, opened beside the
program's idle sandbox, waited on that reservation in a 5 GB guest (600 s, then SE), because no one
releases it while the judge waits. These tests fix the host's MemAvailable at a 5 GB guest's (the
one stand-in: the ledger, its lock, the sandboxes and their cgroups are real) and use a private
ledger, so other judges on this machine do not count."""

import contextlib
import threading
import time

import pytest

from backend.grading.judge import JudgeTest, Program, SpecialJudge, judge
from backend.sandbox import admission, cgroups

GUEST_AVAILABLE = 4400 << 20  # MemAvailable of the 5 GB guest; at share 0.5: 2200 MB for sandboxes
CHECKER = "import sys\ngot, want = (open(p).read().split() for p in sys.argv[2:4])\nsys.exit(0 if got == want else 1)\n"
TESTS = [JudgeTest("1 2\n", "3\n"), JudgeTest("2 5\n", "7\n")]


@pytest.fixture
def small_host(tmp_path, monkeypatch):
    monkeypatch.setenv("FLAB_ADMISSION_LEDGER", str(tmp_path / "ledger.json"))
    monkeypatch.setenv("FLAB_JUDGE_MEMORY_SHARE", "0.5")
    monkeypatch.setattr(admission, "mem_available_bytes", lambda: GUEST_AVAILABLE)


def finished_within(seconds: float, work) -> list:
    """work()'s result, run in a thread given `seconds` (the old wait was 600 s)."""
    out: list = []
    worker = threading.Thread(target=lambda: out.append(work()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"still waiting after {seconds} s"
    return out


def test_a_special_judge_beside_the_programs_sandbox_is_admitted_at_once(small_host):
    """The checker's load reserves the compile cap, 2048 + 8 MB; beside the program's idle 256 + 8
    MB that is over 2200 MB, alone it fits."""
    if not isinstance(cgroups.detect(), cgroups.Layout):
        pytest.skip("admission is per cgroup cap")
    program = Program("print(sum(map(int, input().split())))")
    start = time.monotonic()
    [result] = finished_within(60, lambda: judge(program, TESTS, checker=SpecialJudge(CHECKER, "python")))
    assert result.verdict == "AC", result.test_results[0].detail
    assert time.monotonic() - start < 30
    assert admission.running() == {}


class Holder:
    """A reservation held between tests, as a session holds it; `busy` while in a test."""

    def __init__(self, key: str, cap: int):
        self.busy = False
        self.stack = contextlib.ExitStack()
        self.stack.enter_context(admission.admitted(key, cap, holder=self))

    def yield_admission(self) -> bool:
        if self.busy:
            return False
        self.stack.close()
        return True


def test_an_idle_reservation_of_this_process_is_taken_back_and_a_busy_one_waited_on(small_host):
    cap = int(0.2 * GUEST_AVAILABLE)  # two fit under the 50 % share, not three
    _, busy = Holder("idle", cap), Holder("busy", cap)
    busy.busy = True
    with admission.admitted("third", cap):
        assert set(admission.running()) == {"busy", "third"}  # the idle one gave its share back
    order = []

    def fourth():
        with admission.admitted("fourth", cap), admission.admitted("fifth", cap):
            order.append("admitted")

    waiting = threading.Thread(target=fourth, daemon=True)
    waiting.start()
    time.sleep(0.3)
    order.append("busy released")  # the fifth needs the busy one's share: it waits for its test
    busy.stack.close()
    waiting.join(10)
    assert order == ["busy released", "admitted"] and admission.running() == {}
