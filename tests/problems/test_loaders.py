"""Loaders read fixtures written here in the exact published formats, then the judge runs on them."""

import base64
import json
import os
import pickle
import zlib

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from backend.errors import UserError
from backend.problems import ccplus, lcb
from backend.records import Problem, Test
from backend.sandbox.judge import JudgeTest, Program, SpecialJudge, judge
from tests.conftest import run_cli


def zlib_pickled(obj) -> str:
    """How code_generation_lite stores private tests: base64(zlib(pickle(json string)))."""
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(obj)))).decode()


def lcb_row(qid, date, difficulty="easy", functional=False, private=None, platform="atcoder"):
    if functional:
        public = [{"input": "[2, 7, 11, 15]\n9", "output": "[0, 1]", "testtype": "functional"}]
        private = (
            private if private is not None else [{"input": "[3, 3]\n6", "output": "[0, 1]", "testtype": "functional"}]
        )
        meta = {"func_name": "twoSum"}
        starter = "class Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n        "
    else:
        public = [{"input": "1 2\n", "output": "3\n", "testtype": "stdin"}]
        private = private if private is not None else [{"input": "40 2\n", "output": "42\n", "testtype": "stdin"}]
        meta, starter = {}, ""
    return {
        "question_title": f"Q{qid}", "question_content": "Add two numbers.", "platform": platform,
        "question_id": qid, "contest_id": "abc001", "contest_date": date, "starter_code": starter,
        "difficulty": difficulty, "public_test_cases": json.dumps(public),
        "private_test_cases": zlib_pickled(private), "metadata": json.dumps(meta),
    }  # fmt: skip


@pytest.fixture
def lcb_dir(tmp_path):
    d = tmp_path / "code_generation_lite"
    d.mkdir()
    (d / "test.jsonl").write_text(json.dumps(lcb_row("abc001_a", "2023-05-01T00:00:00")) + "\n")
    rows = [
        lcb_row("lc-1", "2024-09-01T00:00:00", "medium", functional=True),
        lcb_row("abc002_b", "2024-10-01T00:00:00", "hard"),
    ]
    (d / "test2.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return d


def to_judge(tests):
    return [JudgeTest(t.input, t.output) for t in tests]


def test_lcb_loads_stdin_and_functional_and_judges(lcb_dir):
    loaded = {p.id: (p, t) for p, t in lcb.load(lcb_dir, lcb.LCBFilter("v2"))}
    assert set(loaded) == {"lcb/abc001_a", "lcb/lc-1", "lcb/abc002_b"}
    _, tests = loaded["lcb/abc001_a"]
    assert [t.output for t in tests] == ["3\n", "42\n"] and [t.is_public for t in tests] == [True, False]
    good, bad = "a, b = map(int, input().split())\nprint(a + b)", "print(3)"
    assert judge(Program(good), to_judge(tests)).verdict == "AC"
    assert judge(Program(bad), to_judge(tests)).verdict == "WA"
    fp, ftests = loaded["lcb/lc-1"]
    assert (fp.kind, fp.func_name, fp.checker) == ("functional", "twoSum", "functional")
    sol = fp.starter_code + "seen = {}\n        for i, x in enumerate(nums):\n            if target - x in seen:\n"
    sol += "                return [seen[target - x], i]\n            seen[x] = i\n"
    assert judge(Program(sol), to_judge(ftests), func_name="twoSum").verdict == "AC"
    assert judge(Program(fp.starter_code + "return [0, 0]\n"), to_judge(ftests), func_name="twoSum").verdict == "WA"


def test_lcb_version_and_filters(lcb_dir):
    assert [p.id for p, _ in lcb.load(lcb_dir, lcb.LCBFilter("v1"))] == ["lcb/abc001_a"]
    assert {p.id for p, _ in lcb.load(lcb_dir, lcb.LCBFilter("v2_v2"))} == {"lcb/lc-1", "lcb/abc002_b"}
    assert [p.id for p, _ in lcb.load(lcb_dir, lcb.LCBFilter("v2", since="2024-09-15"))] == ["lcb/abc002_b"]
    assert [p.id for p, _ in lcb.load(lcb_dir, lcb.LCBFilter("v2", difficulty="medium"))] == ["lcb/lc-1"]
    with pytest.raises(UserError, match=r"test3\.jsonl not found"):
        lcb.load(lcb_dir, lcb.LCBFilter("v3"))
    with pytest.raises(UserError, match="bad LiveCodeBench version"):
        lcb.load(lcb_dir, lcb.LCBFilter("latest"))


def test_lcb_private_tests_as_plain_json(tmp_path):
    row = lcb_row("x", "2024-01-01")
    row["private_test_cases"] = json.dumps([{"input": "5 5\n", "output": "10\n", "testtype": "stdin"}])
    (tmp_path / "test.jsonl").write_text(json.dumps(row) + "\n")
    (_, tests), = lcb.load(tmp_path, lcb.LCBFilter("v1"))  # fmt: skip
    assert [t.output for t in tests] == ["3\n", "10\n"]


class _Exploit:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_malicious_pickle_is_refused_and_runs_nothing(tmp_path):
    marker = tmp_path / "pwned"
    payload = base64.b64encode(zlib.compress(pickle.dumps(_Exploit(marker)))).decode()
    row = lcb_row("evil", "2024-01-01")
    row["private_test_cases"] = payload
    (tmp_path / "test.jsonl").write_text(json.dumps(row) + "\n")
    with pytest.raises(UserError, match=r"refused an unsafe pickle that references (posix|os)\.system"):
        lcb.load(tmp_path, lcb.LCBFilter("v1"))
    assert not marker.exists()


def test_malformed_lcb_names_the_line_and_imports_nothing(tmp_path, db_path):
    good = json.dumps(lcb_row("ok1", "2024-01-01"))
    no_field = lcb_row("ok2", "2024-01-01")
    del no_field["public_test_cases"]
    (tmp_path / "test.jsonl").write_text(good + "\n" + json.dumps(no_field) + "\n")
    out = run_cli("problems", "import", "lcb", str(tmp_path), "--version", "v1", "--db", str(db_path))
    assert out.returncode == 2 and "test.jsonl:2: missing field 'public_test_cases'" in out.stderr
    (tmp_path / "test.jsonl").write_text(good + "\n{not json\n")
    out = run_cli("problems", "import", "lcb", str(tmp_path), "--version", "v1", "--db", str(db_path))
    assert out.returncode == 2 and "test.jsonl:2: not a JSON line" in out.stderr
    from backend.store import Store

    assert Store(db_path).count(Problem) == 0  # nothing imported half-way


TESTLIB_CHECKER = r"""
#include "testlib.h"
int main(int argc, char* argv[]) {
    registerTestlibCmd(argc, argv);
    long long n = inf.readLong();
    long long a = ouf.readLong(), b = ouf.readLong();
    if (a * b == n && a > 1 && b > 1) quitf(_ok, "ok");
    quitf(_wa, "%lld * %lld != %lld", a, b, n);
}
"""


@pytest.fixture
def ccplus_file(tmp_path):
    rows = [{
        "id": "1000A", "title": "Any Factorisation", "description": "Print two factors > 1 of n.",
        "time_limit": 1000, "memory_limit": 256,
        "test_cases": [{"input": "10\n", "output": "2 5\n"}, {"input": "91\n", "output": "7 13\n"}],
        "checker": TESTLIB_CHECKER,
        "correct_submissions": [{"code": "n = int(input())\nd = next(d for d in range(2, n) if n % d == 0)\nprint(n // d, d)", "language": "python3"}],
        "incorrect_submissions": [{"code": "print(1, int(input()))", "language": "python3"}],
    }, {
        "id": "1000B", "title": "Echo", "description": "Print n.", "time_limit": 20000, "memory_limit": 256,
        "test_cases": [{"input": "1\n", "output": "1\n"}], "checker": None,
        "correct_submissions": [], "incorrect_submissions": [],
    }]  # fmt: skip
    path = tmp_path / "train-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def test_ccplus_loads_and_validates_the_judge_with_its_submissions(ccplus_file):
    loaded = {p.id: (p, t, s) for p, t, s in ccplus.load(ccplus_file)}
    p, tests, subs = loaded["ccplus/1000A"]
    assert (p.time_limit_s, p.memory_limit_mb, p.checker) == (1.0, 256, "special")
    checker = SpecialJudge(p.checker_source, "cpp")
    for sub in subs:  # the judge must agree with the dataset's own labels
        verdict = judge(Program(sub.code), to_judge(tests), checker=checker).verdict
        assert (verdict == "AC") == sub.correct, (sub.correct, verdict)
    assert loaded["ccplus/1000B"][0].checker == "exact"


def test_ccplus_filters_and_errors(ccplus_file, tmp_path):
    assert [p.id for p, _, _ in ccplus.load(ccplus_file, ccplus.CCPlusFilter(min_tests=2))] == ["ccplus/1000A"]
    assert [p.id for p, _, _ in ccplus.load(ccplus_file, ccplus.CCPlusFilter(max_time_limit_s=5))] == ["ccplus/1000A"]
    broken = tmp_path / "broken.parquet"
    pq.write_table(pa.table({"id": ["x"], "title": ["t"]}), broken)
    with pytest.raises(UserError, match="missing column 'description'"):
        ccplus.load(broken)


def test_cli_imports_and_stored_special_judge(ccplus_file, lcb_dir, db_path, tmp_path):
    out = run_cli("problems", "import", "ccplus", str(ccplus_file), "--db", str(db_path))
    assert out.returncode == 0 and "imported 2 CodeContests+ problems" in out.stdout
    out = run_cli("problems", "import", "lcb", str(lcb_dir), "--version", "v2", "--db", str(db_path))
    assert "imported 3 LiveCodeBench problems" in out.stdout
    from backend.store import Store

    assert Store(db_path).count(Test, {"problem_id": "ccplus/1000A"}) == 2
    code = tmp_path / "sol.py"
    code.write_text("n = int(input())\nd = next(d for d in range(2, n) if n % d == 0)\nprint(d, n // d)")
    res = run_cli("judge", "--code", str(code), "--problem", "ccplus/1000A", "--json", "--db", str(db_path))
    assert json.loads(res.stdout)["verdict"] == "AC"
    listed = json.loads(run_cli("problems", "list", "--bench", "lcb", "--json", "--db", str(db_path)).stdout)
    assert {p["id"] for p in listed} == {"lcb/abc001_a", "lcb/lc-1", "lcb/abc002_b"}
