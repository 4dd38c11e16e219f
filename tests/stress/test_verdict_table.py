"""The verdict table under load: AC, WA, TLE, MLE, RE and slow-but-ok, in C++ and Python, on both
backends, judged again and again beside CPU hogs on every core and a memory churner. Every run
must give the table's verdict: the program decides, never the machine's load. `make stress` runs
20 repeats, CI (`make test`) 3; FLAB_STRESS_REPEATS sets the count.

One program per language plays every row, chosen by the test's input (`MODE a b`), and is judged
with `run_all`, so each repeat compiles once: the per-test verdicts are the judge's own rules,
and the compile, which is not what is under test, stays out of the cost.

The limits keep each row's deciding resource far from the other limit: the MLE row reaches its
cap within a fifth of the time limit even when page faults are slow, and the slow-but-ok row uses
half of it (measured by itself, in CPU time).
"""

import math
import os
import time

import pytest

from backend.grading.judge import JudgeTest, Program, judge
from backend.grading.limits import JudgeLimits
from tests.stress.conftest import FIGURES

pytestmark = pytest.mark.stress

REPEATS = int(os.environ.get("FLAB_STRESS_REPEATS", "3"))
LIMITS = JudgeLimits(time_limit_s=0.5, memory_mb=32)
# row -> the verdict the rules give it; the row's test is `MODE 1 2` with the answer 3
ROWS = {"AC": "AC", "WA": "WA", "TLE": "TLE", "MLE": "MLE", "RE": "RE", "slow_but_ok": "AC"}
PYTHON = """\
import time
mode, a, b = input().split()
a, b = int(a), int(b)
if mode == "WA":
    print(a - b)
elif mode == "TLE":
    while True:
        pass
elif mode == "MLE":
    x = bytearray(1 << 30)
elif mode == "RE":
    raise ValueError("boom")
else:
    if mode == "slow_but_ok":
        t = time.process_time()
        while time.process_time() - t < 0.25:
            pass
    print(a + b)
"""
CPP = """\
#include <bits/stdc++.h>
using namespace std;
int main() {
    string mode; long a, b; cin >> mode >> a >> b;
    if (mode == "WA") { cout << a - b << endl; return 0; }
    if (mode == "TLE") { volatile long x = 0; for (;;) x++; }
    if (mode == "MLE") { vector<char> v(1 << 30, 1); cout << (int)v[12345] << endl; return 0; }
    if (mode == "RE") { vector<int> v; return v.at(3); }
    if (mode == "slow_but_ok") { clock_t s = clock(); volatile long x = 0; \
while (clock() - s < CLOCKS_PER_SEC / 4) x++; }
    cout << a + b << endl;
}
"""
PROGRAMS = {"python": PYTHON, "cpp": CPP}


def row_tests() -> list[JudgeTest]:
    # the judge runs tests in ascending input length; the row names differ in length, so pad
    # every input to one length and keep the table's order
    return [JudgeTest(f"{row} 1 2".ljust(20) + "\n", "3\n") for row in ROWS]


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.99 * len(ordered)) - 1)]


@pytest.mark.parametrize("backend", ["bwrap", pytest.param("docker", marks=pytest.mark.docker)])
def test_verdict_table_is_stable_under_load(request, backend):
    if backend == "docker":
        request.getfixturevalue("docker_ready")
    request.getfixturevalue("machine_under_load")
    flips, walls, runs = [], [], 0
    for repeat in range(REPEATS):
        for language, source in PROGRAMS.items():
            start = time.monotonic()
            result = judge(Program(source, language), row_tests(), LIMITS, backend=backend, run_all=True)
            walls.append(time.monotonic() - start)
            assert result.compile_error is None, result.compile_error
            for row, test in zip(ROWS, result.test_results, strict=True):
                runs += 1
                if test.verdict != ROWS[row]:
                    flips.append(f"repeat {repeat}: {language} {row} gave {test.verdict}, not {ROWS[row]}")
    FIGURES[backend] = {"runs": runs, "flips": len(flips), "p99_wall_s": p99(walls), "repeats": REPEATS}
    assert not flips, "; ".join(flips)


def test_p99_is_the_value_below_which_99_percent_fall():
    assert p99([float(i) for i in range(1, 101)]) == 99.0
    assert p99([3.0, 1.0, 2.0]) == 3.0
