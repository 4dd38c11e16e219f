"""One record of a run crosses launcher → session → judge (issue #48): declared once, in
backend/sandbox/result.py. The launcher cannot import it, so its JSON keys are read off a real
sandbox here; no other module of backend/ declares the record's keys a second time."""

import ast
import dataclasses

from backend.grading.limits import JudgeLimits
from backend.sandbox import session as session_module
from backend.sandbox.backends import open_session
from backend.sandbox.result import STDOUT_SIZE, LauncherReply, MemoryUsage, RunResult, launcher_oom_killed
from tests.conftest import ROOT

RECORD = {f.name for f in dataclasses.fields(RunResult)}
WIRE = {f.name for f in dataclasses.fields(LauncherReply)} | {STDOUT_SIZE}
HOME = ROOT / "backend/sandbox/result.py"
LAUNCHER = ROOT / "backend/sandbox/launcher.py"  # the wire's other end, checked against a real reply below


def replies_of(monkeypatch) -> list[dict]:
    """Every reply the launcher sends, as it arrived (before the session builds the record)."""
    seen = []
    real_call = session_module.Session.call

    def recording_call(self, msg, timeout, payload=b""):
        reply = real_call(self, msg, timeout, payload)
        seen.append(dict(reply))
        return reply

    monkeypatch.setattr(session_module.Session, "call", recording_call)
    return seen


def test_the_launcher_sends_the_records_fields(backend, monkeypatch):
    """A `test` (the judge's path) and a staged `shell` command (a rollout's), on bwrap and in
    docker's container: the launcher's reply has exactly LauncherReply's keys and the output's
    size, and the session hands on a RunResult."""
    seen = replies_of(monkeypatch)
    with open_session(backend) as session:
        assert session.load("python", "print(input()[::-1])", JudgeLimits().for_compile()).ok
        test = session.run(JudgeLimits().for_test(), "abc\n")
        shell = session.run(JudgeLimits().for_test(), cmd="echo hi", files={"a.txt": "x"})
    run_replies = [r for r in seen if "exit_code" in r]
    assert len(run_replies) == 2
    for reply in run_replies:
        assert set(reply) == WIRE
    assert isinstance(test, RunResult) and isinstance(shell, RunResult)
    assert (test.exit_code, test.signal, test.stdout, test.wall_backstop_fired) == (0, None, "cba\n", False)
    assert (shell.exit_code, shell.stdout) == (0, "hi\n")
    assert test.accounting == session.accounting


def test_wall_backstop_fired_means_the_wall_clock_and_not_the_cpu_clock():
    """A sleeper is stopped by the wall backstop (wall limit 3 × 0.2 s + 1 s); a spinner by the CPU
    clock, which leaves the field False though a limit stopped it too."""
    limits = JudgeLimits(time_limit_s=0.2).for_test()
    with open_session("bwrap") as session:
        assert session.load("python", "import time\ntime.sleep(30)", JudgeLimits().for_compile()).ok
        sleeper = session.run(limits)
        assert session.load("python", "while True:\n    pass", JudgeLimits().for_compile()).ok
        spinner = session.run(limits)
    assert sleeper.wall_backstop_fired and sleeper.wall_s >= limits.wall_s and sleeper.cpu_s < 0.2
    assert not spinner.wall_backstop_fired and spinner.cpu_s > 0.2 and spinner.signal == 9


def test_the_host_side_pieces_name_the_records_fields():
    """The cgroup's reading and the reply made up for a launcher the OOM killer took use the
    record's own names, so the session copies them without a mapping."""
    assert {f.name for f in dataclasses.fields(MemoryUsage)} <= RECORD
    assert set(launcher_oom_killed().encode()) == WIRE


def second_schemas(source: str) -> list[int]:
    """Lines of dict literals, dict() calls and class bodies that declare the record's keys: four
    or more of them, or only record keys (two or more). A mere mention (`res.cpu_s`) is no schema."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict):
            keys = [k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
            keys = [k.arg for k in node.keywords if k.arg]
        elif isinstance(node, ast.ClassDef):
            keys = [s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
        else:
            continue
        ours = set(keys) & (RECORD | WIRE)
        if len(ours) >= 4 or (len(ours) >= 2 and len(ours) == len(set(keys))):
            found.append(node.lineno)
    return found


# What the session and the cgroup wrote before #48, and shapes that only share a name or three.
BEFORE = """
reply = {"exit_code": None, "signal": 9, "cpu_s": 0.0, "wall_s": 0.0, "mem_mb": 0.0,
         "timed_out": False, "stdout_bytes": 0, "stderr": ""}
usage = {"mem_mb": used, "oom_killed": oom > oom0, "cap_hit": hit > hit0}
"""
OTHERS = """
context = {"tier": 1, "verdict": "RE", "cpu_s": 0.5, "mem_mb": 3.0, "stderr": ""}
class TestResult:
    index: int
    verdict: str
    cpu_s: float
    wall_s: float
    mem_mb: float
limits = {"cpu_s": 1.0, "wall_s": 4.0, "memory_mb": 256}
"""


def test_the_scan_finds_a_second_schema_and_nothing_else():
    assert second_schemas(BEFORE) == [2, 4]
    assert second_schemas(OTHERS) == []


def test_no_module_declares_the_record_again():
    offenders = {
        str(path.relative_to(ROOT)): lines
        for path in sorted((ROOT / "backend").rglob("*.py"))
        if path not in (HOME, LAUNCHER) and (lines := second_schemas(path.read_text()))
    }
    assert offenders == {}
