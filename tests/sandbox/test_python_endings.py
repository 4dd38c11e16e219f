"""Python programs end in the sandbox as `python3 prog.py` ends them (issue #47): the site
builtins exist, non-daemon threads are joined, atexit handlers run, sys.stdout and the original
stdout are flushed, and a closed stdout is not an error. Each program is first run by plain python3 (the reference:
what the program's author saw), then judged on every backend."""

import subprocess

import pytest

from backend.grading.judge import JudgeTest
from backend.grading.limits import JudgeLimits
from backend.sandbox.backends import open_session
from backend.sandbox.boot import SANDBOX_PYTHON
from tests.sandbox.speed import scaled

READ = "a, b = map(int, input().split())\n"
# each ends correctly under plain python3; all but the last two got RE or WA before #47
ENDINGS = {
    "exit": READ + "print(a + b)\nexit()\nprint('unreachable')\n",
    "quit": READ + "print(a + b)\nquit(0)\n",
    "atexit": "import atexit\n" + READ + "atexit.register(lambda: print(a + b))\n",
    "closes_stdout": "import sys\n" + READ + "sys.stdout.write(f'{a + b}\\n')\nsys.stdout.close()\n",
    "original_stdout_after_rebinding": (
        "import io, sys\nout = sys.stdout\nsys.stdout = io.StringIO()\n" + READ + "print('scratch')\n"
        "out.write(f'{a + b}\\n')\n"
    ),
    "dunder_stdout_after_rebinding": (
        "import io, sys\nsys.stdout = io.StringIO()\n"
        + READ
        + "print('scratch')\nsys.__stdout__.write(f'{a + b}\\n')\n"
    ),
    # the deep-recursion idiom: the main code returns at once, the worker still has its answer to print
    "thread_without_join": (
        "import sys, threading\nsys.setrecursionlimit(10 ** 6)\nthreading.stack_size(1 << 26)\n"
        "def depth(n):\n    return 0 if n == 0 else 1 + depth(n - 1)\n"
        "def main():\n" + "    " + READ + "    print(a + b + depth(100000) - 100000)\n"
        "threading.Thread(target=main).start()\n"
    ),
    # the program is the module __main__, as a script is: pickling its functions finds them
    "pool_of_a_program_function": (
        "import multiprocessing\ndef add(pair):\n    return pair[0] + pair[1]\n"
        + READ
        + "with multiprocessing.Pool(2) as pool:\n    print(pool.map(add, [(a, b)])[0])\n"
    ),
    "import_main": "import __main__\n" + READ + "total = a + b\nprint(__main__.total)\n",
    "sys_exit_0_after_output": "import sys\n" + READ + "print(a + b)\nsys.exit(0)\n",
    "exit_with_none_after_output": "import sys\n" + READ + "print(a + b)\nraise SystemExit\n",
}
# the same endings with a failure in them stay failures, as under python3
FAILURES = {
    "sys_exit_3_after_output": ("import sys\n" + READ + "print(a + b)\nsys.exit(3)\n", 3),
    "exit_with_a_message": ("import sys\n" + READ + "print(a + b)\nsys.exit('bad input')\n", 1),
    "atexit_after_an_exception": ("import atexit\n" + READ + "atexit.register(print, a + b)\n1 / 0\n", 1),
    # python3's own status when it cannot flush stdout at exit: 120
    "stdout_lost_at_exit": ("import os\n" + READ + "print(a + b)\nos.close(1)\n", 120),
}
TEST = JudgeTest("1 2\n", "3\n")


def plain_python3(source: str, tmp_path) -> tuple[int, str]:
    prog = tmp_path / "prog.py"
    prog.write_text(source)
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}  # the sandbox's (no PYTHONUNBUFFERED from the caller)
    done = subprocess.run(
        [SANDBOX_PYTHON, str(prog)], input=TEST.input, capture_output=True, text=True, env=env, timeout=30
    )
    return done.returncode, done.stdout


def in_sandbox(backend: str, source: str) -> tuple[int, str]:
    """The program's exit status and output in the backend's sandbox."""
    limits = scaled(JudgeLimits())  # each ending is fixed work (a Pool starts two interpreters)
    with open_session(backend) as session:
        assert session.load("python", source, limits.for_compile()).ok
        res = session.run(limits.for_test(), TEST.input)
    return res.exit_code, res.stdout


@pytest.mark.parametrize("name", ENDINGS)
def test_an_ending_python3_accepts_is_ac(backend, run, name, tmp_path):
    assert plain_python3(ENDINGS[name], tmp_path) == (0, TEST.output)
    assert in_sandbox(backend, ENDINGS[name]) == (0, TEST.output)
    result = run(ENDINGS[name], [TEST], limits=scaled(JudgeLimits(time_limit_s=1.0)))
    assert result.verdict == "AC", (result.verdict, result.test_results[0].detail)


@pytest.mark.parametrize("name", FAILURES)
def test_an_ending_python3_fails_is_re_with_its_status(backend, run, name, tmp_path):
    source, status = FAILURES[name]
    reference = plain_python3(source, tmp_path)
    assert reference[0] == status
    assert in_sandbox(backend, source) == reference
    assert run(source, [TEST]).verdict == "RE"


def test_an_error_is_reported_as_python3_reports_it(run, tmp_path):
    """The traceback is the program's alone (no launcher frame), ending as python3's ends."""
    source = READ + "def solve():\n    return a // (b - 2)\nsolve()\n"
    prog = tmp_path / "prog.py"
    prog.write_text(source)
    done = subprocess.run([SANDBOX_PYTHON, str(prog)], input=TEST.input, capture_output=True, text=True, timeout=30)
    result = run(source, [TEST])
    assert result.verdict == "RE"
    frames = [line.split(",")[1:] for line in result.test_results[0].detail.splitlines() if line.startswith("  File ")]
    assert frames == [[" line 4", " in <module>"], [" line 3", " in solve"]], result.test_results[0].detail
    assert (
        result.test_results[0].detail.splitlines()[-1]
        == done.stderr.splitlines()[-1]
        == "ZeroDivisionError: integer division or modulo by zero"
    )
