"""Conformance suite: every backend must pass it (one program per verdict, both languages)."""

import pytest

from backend.grading.judge import JudgeTest, SpecialJudge, failure_context
from backend.grading.limits import JudgeLimits
from tests.sandbox.speed import scaled

SUM_TESTS = [JudgeTest("1 2\n", "3\n"), JudgeTest("10 20\n", "30\n")]

PY = {
    "AC": "a, b = map(int, input().split())\nprint(a + b)",
    "WA": "a, b = map(int, input().split())\nprint(a + b + 1)",
    "TLE": "while True:\n    pass",
    "MLE": "blocks = []\nwhile True:\n    blocks.append(bytearray(b'x' * (1 << 24)))",
    "RE": "a, b = map(int, input().split())\nprint(a // 0)",
    "CE": "def broken(:\n    pass",
    "OLE": "while True:\n    print('x' * 4096)",
}
CPP = {
    "AC": '#include <cstdio>\nint main(){long long a,b;scanf("%lld %lld",&a,&b);printf("%lld\\n",a+b);}',
    "WA": '#include <cstdio>\nint main(){long long a,b;scanf("%lld %lld",&a,&b);printf("%lld\\n",a-b);}',
    "TLE": "int main(){volatile unsigned long x=0; for(;;) x++;}",
    "MLE": "#include <vector>\n#include <cstring>\n"
    "int main(){std::vector<char*> v; for(;;){char*p=new char[1<<24]; memset(p,1,1<<24); v.push_back(p);}}",
    "RE": '#include <cstdio>\nint main(){int*p=nullptr; *p=1; printf("%d\\n",*p);}',
    "CE": "int main(){ this is not c++ }",
    "OLE": '#include <cstdio>\nint main(){for(;;) fputs("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\\n", stdout);}',
}
LIMITS = JudgeLimits(time_limit_s=0.5, memory_mb=128, output_mb=2)
EXPECTED_OUTCOME = {
    "AC": "correct",
    "TLE": "optimization_failure",
    "MLE": "optimization_failure",
    "CE": "format_failure",
}


@pytest.mark.parametrize("language,programs", [("python", PY), ("cpp", CPP)], ids=["python", "cpp"])
@pytest.mark.parametrize("verdict", list(PY))
def test_one_program_per_verdict(run, language, programs, verdict):
    result = run(programs[verdict], SUM_TESTS, language=language, limits=scaled(LIMITS))
    assert result.verdict == verdict, result.test_results[0].detail
    assert result.outcome == EXPECTED_OUTCOME.get(verdict, "correctness_failure")
    if verdict == "CE":
        assert result.compile_error


def test_tests_run_in_ascending_input_length_and_stop_at_first_failure(run):
    tests = [JudgeTest("1" * 150 + "\n", "big\n"), JudgeTest("7\n", "7\n"), JudgeTest("12345\n", "12345\n")]
    result = run("s = input()\nprint(s if len(s) < 100 else 'wrong')", tests)
    assert [t.verdict for t in result.test_results] == ["WA", "AC", "AC"]
    assert result.first_failing_test == 0 and result.first_failing_tier == 3
    stop = run("print('nope')", tests)
    assert [t.verdict for t in stop.test_results] == [None, "WA", None]  # index 1 is the shortest
    every = run("print('nope')", tests, run_all=True)
    assert [t.verdict for t in every.test_results] == ["WA", "WA", "WA"]


def test_rewards_follow_tiers(run):
    tests = [JudgeTest("x" * n + "\n", "ok\n") for n in (3, 30, 300, 3000)]  # input_len 4, 31, 301, 3001
    result = run("s = input()\nprint('ok' if len(s) < 1000 else 'slow')", tests, run_all=True)
    r = result.rewards
    assert (r.R_1, r.R_2, r.R_3, r.R_4, r.R_inf) == (1.0, 1.0, 1.0, 0.0, 0.0)
    assert r.partial_continuous == 0.75 and r.partial_discrete == 0.75
    assert result.highest_tier_passed == 3


def test_float_checker(run):
    tests = [JudgeTest("1\n", "0.333333333\n")]
    assert run("print(1/3)", tests, checker="float:1e-6").verdict == "AC"
    assert run("print(0.3334)", tests, checker="float:1e-6").verdict == "WA"
    assert run("print(1/3)", tests).verdict == "WA"  # token-exact by default


def test_special_judge_python_and_cpp(run):
    tests = [JudgeTest("10\n", "2 5\n")]  # any factor pair of 10 is accepted
    py_checker = SpecialJudge(
        "import sys\nn = int(open(sys.argv[1]).read())\na, b = map(int, open(sys.argv[2]).read().split())\n"
        "sys.exit(0 if a * b == n and a > 1 and b > 1 else 1)",
        "python",
    )
    cpp_checker = SpecialJudge(
        "#include <fstream>\nint main(int c,char**v){std::ifstream in(v[1]),out(v[2]);long long n,a=0,b=0;"
        "in>>n;out>>a>>b;return (a*b==n&&a>1&&b>1)?0:1;}",
        "cpp",
    )
    for checker in (py_checker, cpp_checker):
        assert run("print(5, 2)", tests, checker=checker).verdict == "AC"
        assert run("print(1, 10)", tests, checker=checker).verdict == "WA"


def test_functional_problem(run):
    source = "class Solution:\n    def twoSum(self, nums, target):\n        seen = {}\n"
    source += "        for i, x in enumerate(nums):\n            if target - x in seen:\n"
    source += "                return (seen[target - x], i)\n            seen[x] = i\n"
    tests = [JudgeTest("[2, 7, 11, 15]\n9", "[0, 1]"), JudgeTest("[3, 3]\n6", "[0, 1]")]
    limits = scaled(JudgeLimits(time_limit_s=1.0))
    assert run(source, tests, func_name="twoSum", limits=limits).verdict == "AC"
    swapped = source.replace("(seen[target - x], i)", "(i, seen[target - x])")
    assert run(swapped, tests, func_name="twoSum", limits=limits).verdict == "WA"


@pytest.mark.parametrize("language", ["python", "cpp"])
def test_cpu_time_is_measured(run, language):
    programs = {
        "python": "import time\nt = time.process_time()\nwhile time.process_time() - t < 1.0:\n    pass\nprint(3)",
        "cpp": "#include <ctime>\n#include <cstdio>\n"
        'int main(){while((double)clock()/CLOCKS_PER_SEC<1.0){} puts("3");}',
    }
    result = run(programs[language], language=language, limits=JudgeLimits(time_limit_s=3.0))
    assert result.verdict == "AC", result.compile_error
    assert abs(result.test_results[0].cpu_s - 1.0) <= 0.2


@pytest.mark.parametrize("language", ["python", "cpp"])
def test_peak_memory_is_measured(run, language):
    programs = {
        "python": "block = b'x' * (200 * 1024 * 1024)\nprint(3)",
        "cpp": "#include <cstdio>\n#include <cstdlib>\nint main(){size_t n=200u<<20;"
        'volatile char*p=(volatile char*)malloc(n);for(size_t i=0;i<n;i+=4096)p[i]=1;printf("%d\\n",2+p[n-4096]);}',
    }
    result = run(programs[language], language=language, limits=scaled(JudgeLimits(time_limit_s=3.0, memory_mb=512)))
    assert result.verdict == "AC"
    assert abs(result.test_results[0].mem_mb - 200) <= 30


def test_sleeping_program_hits_the_wall_backstop(run):
    result = run("import time\ntime.sleep(60)", limits=JudgeLimits(time_limit_s=0.3))
    assert result.verdict == "TLE"
    assert result.test_results[0].cpu_s < 0.3 and result.test_results[0].wall_s < 5


def test_failure_context_for_repair(run):
    result = run("print(4)")
    ctx = failure_context(result, JudgeLimits(time_limit_s=1.0))
    assert ctx.verdict == "WA" and ctx.tier == 1 and ctx.input_len == 4
    assert "expected '3', got '4'" in ctx.diff
    assert ctx.time_limit_s == 1.0
