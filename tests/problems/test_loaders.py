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
from backend.grading.judge import JudgeTest, Program, SpecialJudge, judge
from backend.problems import ccplus, lcb
from backend.records import Problem, Test
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
    loaded = {p.id: (p, t) for p, t in lcb.load(lcb_dir, lcb.LCBFilter("release_v2"))}
    assert set(loaded) == {"lcb/abc001_a", "lcb/lc-1", "lcb/abc002_b"}
    sp, tests = loaded["lcb/abc001_a"]
    assert (sp.checker, sp.time_limit_s) == ("lcb", 6.0)  # LCB's rules and timeout
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


def ids(path, **kw) -> set[str]:
    return {p.id for p, _ in lcb.load(path, lcb.LCBFilter(**kw))}


def test_lcb_versions_mean_what_they_mean_in_lcb(lcb_dir):
    """vN is one release file, release_vN the cumulative set, vN_vM a range (LCB's dataset script)."""
    assert ids(lcb_dir, version="v1") == {"lcb/abc001_a"}
    assert ids(lcb_dir, version="v2") == {"lcb/lc-1", "lcb/abc002_b"}  # test2.jsonl alone
    assert ids(lcb_dir, version="v2_v2") == ids(lcb_dir, version="v2")
    assert (
        ids(lcb_dir, version="release_v2")
        == ids(lcb_dir, version="v1_v2")
        == {"lcb/abc001_a", "lcb/lc-1", "lcb/abc002_b"}
    )
    with pytest.raises(UserError, match=r"test3\.jsonl not found"):
        lcb.load(lcb_dir, lcb.LCBFilter("v3"))
    with pytest.raises(UserError, match=r"release_latest needs .*test6\.jsonl.*e\.g\. --version release_v2"):
        lcb.load(lcb_dir, lcb.LCBFilter())  # the default is LCB's: every release
    for bad in ("latest", "v0", "v6_v5", "v7", "release_v7", "release_v0"):
        with pytest.raises(UserError, match=r"unknown LiveCodeBench version .*release_latest"):
            lcb.load(lcb_dir, lcb.LCBFilter(bad))


def test_release_latest_is_all_six_files(tmp_path):
    for n in range(1, 7):
        (tmp_path / lcb.release_file(n)).write_text(json.dumps(lcb_row(f"q{n}", f"2024-0{n}-01")) + "\n")
    assert ids(tmp_path) == ids(tmp_path, version="release_latest") == {f"lcb/q{n}" for n in range(1, 7)}
    assert ids(tmp_path, version="v6") == {"lcb/q6"}  # not the cumulative 1,055 of release_v6
    assert ids(tmp_path, version="release_v6") == ids(tmp_path)
    assert ids(tmp_path, version="v5_v6") == {"lcb/q5", "lcb/q6"}


def test_lcb_date_window_includes_both_ends(lcb_dir):
    assert ids(lcb_dir, version="release_v2", since="2024-09-01", until="2024-10-01") == {"lcb/lc-1", "lcb/abc002_b"}
    assert ids(lcb_dir, version="release_v2", until="2024-09-01") == {"lcb/abc001_a", "lcb/lc-1"}
    assert ids(lcb_dir, version="release_v2", since="2024-09-15") == {"lcb/abc002_b"}
    assert ids(lcb_dir, version="release_v2", difficulty="medium") == {"lcb/lc-1"}


def test_lcb_save_to_disk_with_splits_and_versions(tmp_path):
    """A DatasetDict folder: --split picks the split; a version must be the one it was saved with."""
    import datasets

    rows = [lcb_row("a1", "2024-01-01"), lcb_row("a2", "2024-02-01")]
    info = datasets.DatasetInfo(config_name="release_v2")
    split = datasets.Dataset.from_list(rows, info=info)
    folder = tmp_path / "saved"
    datasets.DatasetDict({"test": split, "train": split.select([0])}).save_to_disk(str(folder))
    assert ids(folder) == {"lcb/a1", "lcb/a2"}
    assert ids(folder, split="train") == {"lcb/a1"}
    assert ids(folder, version="release_v2") == ids(folder, version="v1_v2") == {"lcb/a1", "lcb/a2"}
    with pytest.raises(UserError, match="has splits test, train, not 'valid'"):
        ids(folder, split="valid")
    with pytest.raises(UserError, match=r"holds LiveCodeBench release_v2 .* so v2 cannot be taken from it"):
        ids(folder, version="v2")


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


@pytest.mark.slow
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


FACTORS = "n = int(input())\nd = next(d for d in range(2, n) if n % d == 0)\nprint(n // d, d)"
FACTORS_CPP = (
    '#include <cstdio>\nint main(){long long n;scanf("%lld",&n);'
    'for(long long d=2;d<n;d++)if(n%d==0){printf("%lld %lld\\n",d,n/d);return 0;}}'
)


def ccplus_rows(tests_per_problem: int = 2) -> list[dict]:
    """Rows in CodeContests+'s published schema, with its real submission language labels."""
    cases = [
        {"input": "10\n", "output": "2 5\n"},
        {"input": "91\n", "output": "7 13\n"},
        {"input": "15\n", "output": "3 5\n"},
    ]
    return [{
        "id": "1000A", "title": "Any Factorisation", "description": "Print two factors > 1 of n.",
        "time_limit": 1000, "memory_limit": 256, "test_cases": cases[:tests_per_problem], "checker": TESTLIB_CHECKER,
        "true_positive_rate": 1.0, "true_negative_rate": 0.9,
        "correct_submissions": [{"code": FACTORS, "language": "py3"}, {"code": FACTORS_CPP, "language": "cpp"},
                                {"code": "print 2, 5", "language": "py2"},
                                {"code": "class Main {}", "language": "java"}],
        "incorrect_submissions": [{"code": "print(1, int(input()))", "language": "py3"}],
    }, {
        "id": "1000B", "title": "Echo", "description": "Print n.", "time_limit": 20000, "memory_limit": 512,
        "test_cases": [{"input": "1\n", "output": "1\n"}], "checker": None,
        "true_positive_rate": 0.5, "true_negative_rate": 1.0,
        "correct_submissions": [{"code": "print(input())", "language": "py3"}], "incorrect_submissions": [],
    }]  # fmt: skip


@pytest.fixture
def ccplus_root(tmp_path):
    """The dataset root: `default` shards beside one folder per config (the same ids in each)."""
    root = tmp_path / "Code-Contests-Plus"
    for folder, tests in (("default", 1), ("ccplus_1x", 2), ("ccplus_2x", 3)):
        (root / folder).mkdir(parents=True)
        pq.write_table(pa.Table.from_pylist(ccplus_rows(tests)), root / folder / "train-00000-of-00001.parquet")
    return root


@pytest.fixture
def ccplus_file(ccplus_root):
    return ccplus_root / "ccplus_1x" / "train-00000-of-00001.parquet"


def test_ccplus_loads_limits_and_validates_the_judge_with_its_submissions(ccplus_file):
    loaded = {p.id: (p, t) for p, t in ccplus.load(ccplus_file)}
    p, tests = loaded["ccplus/1000A"]
    assert (p.time_limit_s, p.memory_limit_mb, p.checker) == (1.0, 256, "special")  # the data's own limits
    assert (loaded["ccplus/1000B"][0].time_limit_s, loaded["ccplus/1000B"][0].memory_limit_mb) == (20.0, 512)
    subs = ccplus.submissions(ccplus_file, {"ccplus/1000A"})["ccplus/1000A"]
    assert sorted((s.language, s.correct) for s in subs.kept) == [("cpp", True), ("python", False), ("python", True)]
    assert subs.skipped == {"py2": 1, "java": 1}  # languages we do not judge are counted, not guessed
    checker = SpecialJudge(p.checker_source, "cpp")
    for sub in subs.kept:  # the judge must agree with the dataset's own labels
        verdict = judge(Program(sub.code, sub.language), to_judge(tests), checker=checker).verdict
        assert (verdict == "AC") == sub.correct, (sub.correct, verdict)
    assert loaded["ccplus/1000B"][0].checker == "exact"


def test_ccplus_configs_from_the_dataset_root(ccplus_root):
    """The root holds every config: one is chosen (1x by default), never all at once."""

    def tests_of_1000a(config):
        return next(len(t) for p, t in ccplus.load(ccplus_root, config=config) if p.id == "ccplus/1000A")

    assert (tests_of_1000a("1x"), tests_of_1000a("2x")) == (2, 3)
    assert len(ccplus.load(ccplus_root)) == 2  # not 6: default and the other configs are left out
    with pytest.raises(UserError, match="not ccplus_3x; pass --config"):
        ccplus.load(ccplus_root, config="3x")
    with pytest.raises(UserError, match="unknown CodeContests\\+ config '7x'"):
        ccplus.load(ccplus_root, config="7x")
    with pytest.raises(UserError, match="appears twice; point at one config"):
        ccplus.load(ccplus_root / "..", config=None)  # every shard under the root


def test_ccplus_filters_and_errors(ccplus_file, tmp_path):
    def kept(**kw):
        return [p.id for p, _ in ccplus.load(ccplus_file, ccplus.CCPlusFilter(**kw))]

    assert kept(min_tests=2) == ["ccplus/1000A"]
    assert kept(max_time_limit_s=5) == ["ccplus/1000A"]
    assert kept(min_tpr=0.9) == ["ccplus/1000A"] and kept(min_tnr=0.95) == ["ccplus/1000B"]
    broken = tmp_path / "broken.parquet"
    pq.write_table(pa.table({"id": ["x"], "title": ["t"]}), broken)
    with pytest.raises(UserError, match="missing column 'description'"):
        ccplus.load(broken)


@pytest.mark.slow
def test_ccplus_import_streams_and_leaves_the_submissions_on_disk(tmp_path):
    """A shard whose submissions are 300 MB: loading problems reads only the columns it needs, so
    the peak memory stays far below the shard (bench/ccplus_import.py measures a 5 GB shard)."""
    import subprocess
    import sys

    shard = tmp_path / "big.parquet"
    script = f"""
import os, resource, pyarrow as pa, pyarrow.parquet as pq
rows = [{{"id": str(i), "title": "t", "description": "d", "time_limit": 1000, "memory_limit": 256,
         "test_cases": [{{"input": "1\\n", "output": "1\\n"}}], "checker": None,
         "correct_submissions": [{{"code": os.urandom(1 << 19).hex(), "language": "py3"}}]}} for i in range(300)]
pq.write_table(pa.Table.from_pylist(rows), {str(shard)!r}, row_group_size=10)
"""
    subprocess.run([sys.executable, "-c", script], check=True)
    measure = f"""
import resource, pyarrow.parquet
from backend.problems import ccplus
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
n = len(ccplus.load({str(shard)!r}))
print(n, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) // 1024)
"""
    out = subprocess.run([sys.executable, "-c", measure], capture_output=True, text=True, check=True,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))  # fmt: skip
    n, grew_mb = map(int, out.stdout.split())
    assert n == 300 and shard.stat().st_size > 250 << 20
    assert grew_mb < 100, f"loading grew memory by {grew_mb} MB on a {shard.stat().st_size >> 20} MB shard"


@pytest.mark.slow
def test_cli_imports_and_stored_special_judge(ccplus_root, lcb_dir, db_path, tmp_path):
    out = run_cli("problems", "import", "ccplus", str(ccplus_root), "--db", str(db_path))
    assert out.returncode == 0 and "imported 2 CodeContests+ problems" in out.stdout, out.stderr
    out = run_cli("problems", "import", "lcb", str(lcb_dir), "--version", "release_v2", "--db", str(db_path))
    assert "imported 3 LiveCodeBench problems" in out.stdout
    from backend.store import Store

    assert Store(db_path).count(Test, {"problem_id": "ccplus/1000A"}) == 2
    code = tmp_path / "sol.py"
    code.write_text("n = int(input())\nd = next(d for d in range(2, n) if n % d == 0)\nprint(d, n // d)")
    res = run_cli("judge", "--code", str(code), "--problem", "ccplus/1000A", "--json", "--db", str(db_path))
    assert json.loads(res.stdout)["verdict"] == "AC"
    listed = json.loads(run_cli("problems", "list", "--bench", "lcb", "--json", "--db", str(db_path)).stdout)
    assert {p["id"] for p in listed} == {"lcb/abc001_a", "lcb/lc-1", "lcb/abc002_b"}
