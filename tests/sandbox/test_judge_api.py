import json

import pytest

from backend.errors import UserError
from backend.grading.judge import JudgeTest, Program, failure_context, judge
from backend.grading.limits import JudgeLimits
from backend.grading.pool import JudgeJob, judge_many
from backend.outcomes import stored_outcome as outcome_of
from backend.records import REWARD_NAMES, Problem, Test, TestResult, reward_value, rewards
from backend.sandbox.backends import open_session
from tests.conftest import run_cli

TESTS = [JudgeTest("1 2\n", "3\n"), JudgeTest("5 5\n", "10\n")]


def test_none_backend_is_refused_unless_chosen():
    with pytest.raises(UserError, match="pass --backend none explicitly"):
        open_session("none")
    with pytest.raises(UserError, match="unknown sandbox backend"):
        open_session("chroot")


def test_none_backend_judges_with_rlimits_only(capsys):
    result = judge(Program("a, b = map(int, input().split())\nprint(a + b)"), TESTS, backend="none")
    assert result.verdict == "AC"
    assert "NO isolation" in capsys.readouterr().err


def test_pool_streams_every_job_with_its_key():
    programs = {"ok": "a, b = map(int, input().split())\nprint(a + b)", "wrong": "print(0)"}
    jobs = [JudgeJob((name, i), Program(src), TESTS) for i in range(4) for name, src in programs.items()]
    jobs.append(JudgeJob(("format", 0), None, TESTS, format_reason="no code block"))
    got = dict(judge_many(jobs, workers=2))
    assert len(got) == 9
    assert {got[("ok", i)].verdict for i in range(4)} == {"AC"}
    assert {got[("wrong", i)].verdict for i in range(4)} == {"WA"}
    assert got[("format", 0)].outcome == "format_failure"
    assert got[("format", 0)].format_reason == "no code block"
    assert all(reward_value(got[("format", 0)].rewards, name) == 0.0 for name in REWARD_NAMES)


@pytest.mark.parametrize(
    "verdict,outcome",
    [(None, "correct"), ("TLE", "optimization_failure"), ("MLE", "optimization_failure"),
     ("WA", "correctness_failure"), ("RE", "correctness_failure"), ("CE", "format_failure"),
     ("FORMAT", "format_failure"), ("OLE", "correctness_failure"), ("SE", "sandbox_error")],
)  # fmt: skip
def test_outcome_rule(verdict, outcome):
    assert outcome_of(verdict) == outcome


def test_rewards_at_every_tier_boundary():
    # one test just below and one at each power of ten: lengths 9, 10, 99, 100, ... 999_999, 1_000_000
    lengths = [n for k in range(1, 7) for n in (10**k - 1, 10**k)]
    for failing in range(len(lengths)):
        results = [TestResult(i, n, len(str(n)), "AC" if i != failing else "WA") for i, n in enumerate(lengths)]
        r = rewards(results)
        for k in range(1, 7):
            assert reward_value(r, f"R_{k}") == float(lengths[failing] >= 10**k), (failing, k)
        assert r.R_inf == 0.0
    assert REWARD_NAMES == ("R_1", "R_2", "R_3", "R_4", "R_5", "R_6", "R_inf", "partial_discrete", "partial_continuous")


def test_cli_json_contract(tmp_path):
    code = tmp_path / "sol.py"
    code.write_text("a, b = map(int, input().split())\nprint(a + b if a < 50 else 0)")
    tests = tmp_path / "t.jsonl"
    tests.write_text('{"input": "1 2\\n", "output": "3\\n"}\n{"input": "' + "9" * 150 + ' 1\\n", "output": "x\\n"}\n')
    out = run_cli("judge", "--code", str(code), "--tests", str(tests), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert set(data) == {"outcome", "verdict", "first_failing_test", "tests", "rewards", "accounting"}
    assert data["accounting"] in ("cgroup-v1", "cgroup-v2", "cgroup-v2-per-test", "rlimits")
    assert (data["outcome"], data["verdict"], data["first_failing_test"]) == ("correctness_failure", "WA", 1)
    assert set(data["tests"][0]) == {"index", "input_len", "tier", "verdict", "cpu_s", "wall_s", "mem_mb"}
    assert [t["tier"] for t in data["tests"]] == [1, 3]
    assert data["rewards"]["R_2"] == 1.0 and data["rewards"]["R_3"] == 0.0


def test_cli_judges_a_stored_problem_with_its_limits(tmp_path, db_path):
    from backend.store import Store

    store = Store(db_path)
    store.put([Problem(id="t/slow", bench="t", title="Slow", statement="-", time_limit_s=0.3)])
    store.put([Test(problem_id="t/slow", idx=0, input="1\n", output="1\n", input_len=2, tier=1)])
    code = tmp_path / "sol.py"
    code.write_text("while True:\n    pass")
    out = run_cli("judge", "--code", str(code), "--problem", "t/slow", "--json", "--db", str(db_path))
    assert json.loads(out.stdout)["verdict"] == "TLE"


@pytest.mark.parametrize(
    "args,message",
    [(["--tests", "MISSING"], "cannot read tests file"), ([], "exactly one of"), (["--tests", "BAD"], ":1: expected"),
     (["--problem", "no/such"], "no problem 'no/such'")],
)  # fmt: skip
def test_cli_user_errors_exit_2_with_one_line(tmp_path, db_path, args, message):
    code = tmp_path / "sol.py"
    code.write_text("print(1)")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    args = [str(bad) if a == "BAD" else str(tmp_path / "missing.jsonl") if a == "MISSING" else a for a in args]
    out = run_cli("judge", "--code", str(code), *args, "--db", str(db_path))
    assert out.returncode == 2
    assert message in out.stderr and out.stderr.count("\n") == 1


def test_the_judgement_keeps_the_first_failures_detail_whole_and_the_start_of_the_others():
    """What the judge returns is what the store keeps: a crash's stderr (its last 500 characters) in
    full on the first failing test, the first 300 of it on a later one."""
    crash = "import sys\nsys.stderr.write('e' * 400 + 'f' * 400)\nsys.exit(3)"
    judged = judge(Program(crash), TESTS, run_all=True)
    first, later = judged.test_results
    assert (judged.verdict, judged.first_failing_test, first.verdict, later.verdict) == ("RE", 0, "RE", "RE")
    assert first.detail == "e" * 100 + "f" * 400  # the tail the judge keeps of stderr
    assert later.detail == "e" * 100 + "f" * 200
    assert failure_context(judged, JudgeLimits()).stderr == "f" * 300
