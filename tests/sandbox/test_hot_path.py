"""The judge's per-test path (issue #32): one round trip per test, a child forked from the warm
launcher per test, and nothing passing from one test to the next."""

from pathlib import Path

import pytest

from backend.grading import lcb
from backend.grading.judge import JudgeTest, Program, judge
from backend.grading.limits import JudgeLimits
from backend.sandbox import boot
from backend.sandbox import session as session_module
from backend.sandbox.backends import SandboxError, open_session

# What a test sees of what the tests before it did, then leaves behind: files in its run folder,
# in /tmp (the same folder) and beside the launcher in /work, folders made unwritable, and
# attributes set on modules of the interpreter it was forked from.
LEAVES_STATE = """import builtins, os, sys
print(len(os.listdir('.')), os.access('.', os.W_OK), sorted(os.listdir('/work')), \
hasattr(sys, 'mark'), hasattr(builtins, 'mark'))
sys.mark = builtins.mark = 1
open('left', 'w').write('x')
open('/tmp/left2', 'w').write('x')
open('/work/left3', 'w').write('x')
os.makedirs('deep/er')
os.chmod('deep', 0o500)
os.chmod('.', 0o500)
"""
CLEAN = "0 True ['.io', 'run'] False False\n"


def test_no_state_passes_between_tests(run):
    result = run(LEAVES_STATE, [JudgeTest("", CLEAN)] * 3, run_all=True)
    assert [t.verdict for t in result.test_results] == ["AC"] * 3, [t.detail for t in result.test_results]


def test_the_input_is_not_the_programs_memory(run):
    """The input's pages are counted into the baseline before the program starts: a program that
    never reads a 24 MB input uses almost nothing, under a 16 MB limit; one that reads it all
    into a string is measured with it."""
    big = "1" * (24 << 20)
    limits = JudgeLimits(time_limit_s=5.0, memory_mb=16)
    idle = run("print(3)", [JudgeTest(big, "3\n")], limits=limits)
    assert idle.verdict == "AC" and idle.test_results[0].mem_mb < 6, (idle.verdict, idle.test_results[0].mem_mb)
    reader = run("import sys\nprint(len(sys.stdin.read()) // 1024)", [JudgeTest(big, f"{24 << 10}\n")],
                 limits=JudgeLimits(time_limit_s=5.0, memory_mb=256))  # fmt: skip
    assert reader.verdict == "AC" and 24 <= reader.test_results[0].mem_mb <= 120, reader.test_results[0].mem_mb


def test_each_test_is_one_round_trip(monkeypatch):
    """load once, then one `test` message per test (no separate staging call)."""
    ops = []
    real_call = session_module.Session.call

    def recording_call(self, msg, timeout, payload=b""):
        ops.append(msg["op"])
        return real_call(self, msg, timeout, payload)

    monkeypatch.setattr(session_module.Session, "call", recording_call)
    tests = [JudgeTest(f"{i} {i}\n", f"{2 * i}\n") for i in range(5)]
    result = judge(Program("a, b = map(int, input().split())\nprint(a + b)"), tests)
    assert result.verdict == "AC"
    assert ops[:6] == ["load"] + ["test"] * 5, ops


def test_an_input_the_tmpfs_cannot_hold_leaves_the_launcher_in_step():
    """A 12 MB input into an 8 MB tmpfs is a sandbox error, and the launcher still reads all of
    it, so the next test on the same sandbox is judged (it would read input bytes as a message)."""
    session = open_session("bwrap", tmpfs_mb=8)
    try:
        assert session.load("python", "print(input()[::-1])", JudgeLimits().for_compile()).ok
        with pytest.raises(SandboxError, match="No space left"):
            session.run(JudgeLimits().for_test(), "x" * (12 << 20))
        assert session.run(JudgeLimits().for_test(), "abc\n").stdout == "cba\n"
    finally:
        session.close()


@pytest.mark.docker
def test_an_idle_container_that_died_is_replaced(docker_ready):
    """A container kept for the next program can die while idle (its cgroup goes with it); the
    next program is judged on a fresh one, not reported as a sandbox error."""
    session = open_session("docker")
    session.close()  # back to the idle pool
    session.container.kill()
    result = judge(
        Program("a, b = map(int, input().split())\nprint(a + b)"), [JudgeTest("1 2\n", "3\n")], backend="docker"
    )
    assert (result.verdict, session.broken) == ("AC", True)


def test_the_next_program_sees_no_files_of_the_one_before(backend):
    """One sandbox serves many programs (docker keeps its containers): a Python program loaded
    after a C++ one sees no binary or source of it beside the launcher."""
    session = open_session(backend)
    try:
        compile_limits = JudgeLimits().for_compile()
        assert session.load("cpp", "int main() { return 0; }", compile_limits).ok
        assert session.load("python", "import os\nprint(sorted(os.listdir('/work')))", compile_limits).ok
        assert session.run(JudgeLimits().for_test()).stdout == "['.io', 'run']\n"
    finally:
        session.close()


# A LiveCodeBench program after its prelude (imports, star-imports, a recursion limit of 50000),
# which the launcher runs once per program: what the program reads of it, then changes.
AFTER_THE_PRELUDE = lcb.stdin_program(
    "print(random.random(), sys.getrecursionlimit(), heapq.heappush.__name__, len(deque([1])))\n"
    "heapq.heappush = None\nsys.setrecursionlimit(77)\n"
)


def test_a_prelude_runs_once_yet_every_test_starts_from_it_afresh(backend):
    """Each test's fork gets the prelude's state as a fresh run would (a new random seed, modules
    and limit as the prelude left them, whatever the test before changed); the next program in
    the same sandbox (docker keeps its containers) gets none of it."""
    session = open_session(backend)
    try:
        compile_limits, limits = JudgeLimits().for_compile(), JudgeLimits().for_test()
        assert session.load("python", AFTER_THE_PRELUDE, compile_limits, prelude=lcb.PRELUDE).ok
        first, second = (session.run(limits).stdout.split() for _ in range(2))
        assert first[0] != second[0]  # `random` reseeded in each fork
        assert first[1:] == second[1:] == ["50000", "heappush", "1"]
        plain = "import sys\nprint(sys.getrecursionlimit(), 'deque' in globals())"
        assert session.load("python", plain, compile_limits).ok
        assert session.run(limits).stdout == "1000 False\n"
    finally:
        session.close()


# A submission that, on its first test, puts a script where its compiled binary was: each later
# test would run the script instead (the work folder is writable by the program's uid).
REPLACES_ITS_BINARY = r"""
#include <cstdio>
#include <unistd.h>
#include <sys/stat.h>
int main() {
    unlink("/work/prog");
    if (FILE* f = fopen("/work/prog", "w")) {
        fputs("#!/bin/sh\necho replaced\n", f);
        fclose(f);
        chmod("/work/prog", 0755);
    }
    int a, b;
    if (scanf("%d %d", &a, &b) == 2) printf("%d\n", a + b);
}
"""


def test_a_program_cannot_replace_what_the_next_test_runs(run):
    tests = [JudgeTest("1 2\n", "3\n"), JudgeTest("2 2\n", "4\n"), JudgeTest("3 4\n", "7\n")]
    result = run(REPLACES_ITS_BINARY, tests, language="cpp", run_all=True)
    assert [t.verdict for t in result.test_results] == ["AC"] * 3, [t.detail for t in result.test_results]


def _launcher_private_kb(monkeypatch, argv: list[str], image: bytes) -> tuple[int, str]:
    """A launcher started with `argv` and sent `image`: its private memory after one test (what
    the next test forks), and that test's output."""
    monkeypatch.setattr(session_module, "launcher_image", lambda: image)
    with session_module.Session(session_module.popen(argv)) as s:
        s.load("python", "print(sum(map(int, input().split())))", JudgeLimits().for_compile())
        out = s.run(JudgeLimits().for_test(), "2 3\n").stdout
        status = Path(f"/proc/{s.proc.pid}/status").read_text()
        kb = int(next(line for line in status.splitlines() if line.startswith("RssAnon")).split()[1])
    return kb, out


def test_the_launcher_holds_no_syntax_tree_of_its_own_source(monkeypatch, tmp_path):
    """Every test forks the launcher, so its pages are paid per test. Started from the small BOOT
    stub, which compiles the source it is sent, it holds at least 512 KB less than started as
    `python3 -c SOURCE`, whose syntax tree CPython keeps until the launcher returns (never)."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    booted = _launcher_private_kb(
        monkeypatch, boot.launcher_command(boot.SANDBOX_PYTHON, str(tmp_path / "a")), boot.launcher_image()
    )
    helpers = "".join(  # the helper modules, registered as BOOT does, then the launcher: one -c string
        f"import sys\n_m = sys.modules[{name!r}] = type(sys)({name!r})\nexec({source!r}, _m.__dict__)\n"
        for name, source in boot.LAUNCHER_MODULES
    )
    legacy_argv = [boot.SANDBOX_PYTHON, "-I", "-S", "-c", helpers + boot.LAUNCHER_SOURCE, str(tmp_path / "b")]
    legacy = _launcher_private_kb(monkeypatch, legacy_argv, b"")
    assert booted[1] == legacy[1] == "5\n"
    assert booted[0] <= legacy[0] - 512, (booted, legacy)


def test_every_test_runs_on_one_cpu():
    """A bwrap launcher is pinned to the CPU the host ran on when it opened the sandbox, so each
    test's hand-offs stay on one CPU (backends.pin_to_current_cpu); every test's process inherits it."""
    program = "import os\nprint(len(os.sched_getaffinity(0)))"
    result = judge(Program(program), [JudgeTest("", "1\n")] * 3, backend="bwrap")
    assert result.verdict == "AC", [t.detail for t in result.test_results]
