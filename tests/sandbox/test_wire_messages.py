"""The messages across the launcher boundary are typed (backend/sandbox/result.py): each encodes and
decodes once, and a reply with a missing, renamed or mistyped key fails loudly at the session, as a
WireError (a frontier-lab bug), not as a sandbox error the judge would retry and record as SE."""

import dataclasses
import re

import pytest

from backend.grading.limits import JudgeLimits
from backend.sandbox import session as session_module
from backend.sandbox.backends import SandboxError, open_session
from backend.sandbox.result import (
    LoadReply,
    LoadRequest,
    RunReply,
    RunRequest,
    ShellRequest,
    StageRequest,
    TestLimits,
    TestRequest,
    WireError,
    launcher_oom_killed,
)
from tests.conftest import ROOT

REPLY = {"exit_code": 0, "signal": None, "cpu_s": 0.01, "wall_s": 0.02, "mem_mb": 9.5,
         "wall_backstop_fired": False, "stderr": "", "stdout_bytes": 4}  # fmt: skip


def test_each_message_round_trips():
    limits = TestLimits(cpu_s=2.0, wall_s=7.0, memory_mb=256, output_mb=16, max_procs=32)
    assert TestLimits.decode(limits.encode()) == limits
    assert limits.encode() == {"cpu_s": 2.0, "wall_s": 7.0, "memory_mb": 256, "output_mb": 16, "max_procs": 32}
    for reply in (LoadReply(True, None), LoadReply(False, "SyntaxError"), LoadReply(True, None, "AAEC")):
        assert LoadReply.decode(reply.encode()) == reply
    assert LoadReply(True, None).encode() == {"ok": True, "error": None}  # what the launcher sends for Python
    assert LoadReply(True, None, "AAEC").binary == b"\x00\x01\x02"
    assert RunReply.decode(REPLY).encode() == REPLY
    assert RunReply.decode(launcher_oom_killed().encode()) == launcher_oom_killed()


def test_judge_limits_become_the_launchers_limits():
    """By hand: wall backstop = 3 x 2 s + 1 s; compile: 30 s CPU, twice that on the wall."""
    assert JudgeLimits().for_test() == TestLimits(2.0, 7.0, 256, 16, 32)
    assert JudgeLimits(time_limit_s=0.5, wall_factor=2.0, memory_mb=64).for_test() == TestLimits(0.5, 2.0, 64, 16, 32)
    assert JudgeLimits().for_compile() == TestLimits(30.0, 60.0, 2048, 256, 32)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: {k: v for k, v in r.items() if k != "stdout_bytes"}, r"missing \['stdout_bytes'\]"),
        (lambda r: {("timed_out" if k == "wall_backstop_fired" else k): v for k, v in r.items()},
         r"missing \['wall_backstop_fired'\], unexpected \['timed_out'\]"),
        (lambda r: r | {"cpu_s": "0.01"}, r"cpu_s='0.01' of the wrong type"),
        (lambda r: r | {"exit_code": 0.5}, r"exit_code=0.5 of the wrong type"),
    ],
)  # fmt: skip
def test_a_reply_that_lost_or_renamed_a_key_is_refused(change, message):
    with pytest.raises(WireError, match=message):
        RunReply.decode(change(REPLY))


def test_a_load_reply_or_limits_with_a_renamed_key_is_refused():
    with pytest.raises(WireError, match=r"missing \['ok'\], unexpected \['success'\]"):
        LoadReply.decode({"success": True, "error": None})
    with pytest.raises(WireError, match=r"missing \['memory_mb'\], unexpected \['mem_mb'\]"):
        TestLimits.decode({"cpu_s": 1.0, "wall_s": 4.0, "mem_mb": 256, "output_mb": 16, "max_procs": 32})


def test_the_launcher_reads_exactly_the_limits_fields():
    """The launcher cannot import TestLimits: the keys it reads from a limits dict are its fields."""
    source = "".join((ROOT / "backend/sandbox" / f).read_text() for f in ("launcher.py", "launcher_limits.py"))
    read = set(re.findall(r"\blim\[[\"'](\w+)[\"']\]", source))
    assert read == {f.name for f in dataclasses.fields(TestLimits)}


REQUESTS = (LoadRequest, StageRequest, TestRequest, RunRequest, ShellRequest)


def test_requests_encode_as_the_launcher_reads_them():
    limits = TestLimits(1.0, 4.0, 64, 16, 32)
    assert TestRequest(limits, [], 3).encode() == {
        "op": "test",
        "limits": limits.encode(),
        "args": [],
        "input_bytes": 3,
    }
    assert ShellRequest("ls", limits).encode() == {"op": "shell", "cmd": "ls", "limits": limits.encode()}
    # optional fields are sent only when set, as the launcher's msg.get() expects
    assert LoadRequest("python", "print(1)", limits).encode() == {
        "op": "load", "language": "python", "source": "print(1)", "compile_limits": limits.encode()
    }  # fmt: skip
    full = LoadRequest("cpp", "int main(){}", limits, {"testlib.h": "//"}, True).encode()
    assert (full["headers"], full["return_binary"], "binary_b64" in full) == ({"testlib.h": "//"}, True, False)
    launcher = (ROOT / "backend/sandbox/launcher.py").read_text()
    read = set(re.findall(r"\bmsg(?:\[|\.get\()[\"'](\w+)[\"']", launcher))
    assert read == {"op"} | {f.name for r in REQUESTS for f in dataclasses.fields(r)}


def test_a_renamed_key_from_a_real_launcher_fails_loudly_not_as_se(monkeypatch):
    """A real sandbox whose replies are read through a renaming pipe: the session refuses the first
    one (a WireError is no SandboxError, so the judge does not retry it as SE)."""
    real_recv = session_module.Session._recv

    def renaming_recv(self, timeout):
        reply = real_recv(self, timeout)
        return {("timed_out" if k == "wall_backstop_fired" else k): v for k, v in reply.items()}

    with open_session("bwrap") as session:
        loaded = session.load("python", "print(input()[::-1])", JudgeLimits().for_compile())
        assert loaded == LoadReply(True, None)
        assert "SyntaxError" in session.load("python", "print(", JudgeLimits().for_compile()).error
        assert session.load("python", "print(input()[::-1])", JudgeLimits().for_compile()).ok
        assert session.run(JudgeLimits().for_test(), "abc\n").stdout == "cba\n"
        monkeypatch.setattr(session_module.Session, "_recv", renaming_recv)
        with pytest.raises(WireError, match=r"unexpected \['timed_out'\]") as caught:
            session.run(JudgeLimits().for_test(), "abc\n")
    assert not isinstance(caught.value, SandboxError)
