"""Import compiles every checker once (cached), stores unjudgeable problems as such, and
`calibrate --bench ccplus` measures agreement with the dataset's own labels."""

import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from backend.errors import UserError
from backend.grading import special
from backend.grading.judge import judge_setup
from backend.problems import importing
from backend.problems.ccplus import CCPlusFilter
from backend.records import Problem
from backend.rollout.run import RolloutSpec, select_problems
from backend.store import Store
from tests.conftest import run_cli
from tests.problems.test_loaders import ccplus_rows

BROKEN = '#include "testlib.h"\nint main(int argc, char* argv[]) { registerTestlibCmd(argc, argv); this is not c++; }'


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "checker-cache"
    monkeypatch.setenv("FLAB_CHECKER_CACHE", str(folder))
    return folder


@pytest.fixture
def shard_with_a_broken_checker(tmp_path):
    rows = ccplus_rows()
    rows.append({**rows[0], "id": "1000C", "checker": BROKEN})
    path = tmp_path / "ccplus_1x" / "train-00000-of-00001.parquet"
    path.parent.mkdir()
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


@pytest.mark.slow
def test_a_checker_is_compiled_once_per_source_and_header(cache):
    source = ccplus_rows()[0]["checker"]
    first = special.compile_checker(source)
    files = list(cache.glob("*.bin"))
    assert len(files) == 1 and files[0].read_bytes() == first and first[:4] == b"\x7fELF"
    stamp = files[0].stat().st_mtime_ns
    assert special.compile_checker(source) == first  # from the cache: not rewritten
    assert files[0].stat().st_mtime_ns == stamp
    with pytest.raises(special.CheckerCompileError, match="does not compile"):
        special.compile_checker(BROKEN)
    assert len(list(cache.glob("*.bin"))) == 1  # nothing cached for a failure


@pytest.mark.slow
def test_import_stores_an_uncompilable_checker_as_unjudgeable(cache, shard_with_a_broken_checker, db_path):
    store = Store(db_path)
    report = importing.import_ccplus(store, shard_with_a_broken_checker, CCPlusFilter(), progress=False)
    assert report.problems == 3 and set(report.unjudgeable) == {"ccplus/1000C"}
    assert "stored as unjudgeable, e.g. ccplus/1000C: the checker does not compile" in report.line("CodeContests+")
    bad = store.get(Problem, "ccplus/1000C")
    assert bad.judge_error and store.get(Problem, "ccplus/1000A").judge_error is None
    with pytest.raises(UserError, match="ccplus/1000C cannot be judged"):
        judge_setup(bad)
    chosen = [p.id for p in select_problems(store, RolloutSpec(checkpoint="x", bench="ccplus"))]
    assert chosen == ["ccplus/1000A", "ccplus/1000B"]  # sweeps and RL skip it


@pytest.mark.slow
def test_cli_import_reports_unjudgeable_problems(cache, shard_with_a_broken_checker, db_path):
    out = run_cli("problems", "import", "ccplus", str(shard_with_a_broken_checker), "--db", str(db_path))
    assert out.returncode == 0, out.stderr
    assert "imported 3 CodeContests+ problems" in out.stdout and "1 stored as unjudgeable" in out.stdout


@pytest.mark.slow
def test_calibrate_ccplus_reports_agreement_with_the_dataset_labels(cache, shard_with_a_broken_checker, db_path):
    run_cli("problems", "import", "ccplus", str(shard_with_a_broken_checker), "--db", str(db_path))
    out = run_cli(
        "problems", "calibrate", "--bench", "ccplus", "--path", str(shard_with_a_broken_checker),
        "--sample", "5", "--db", str(db_path),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    # 1000A: py3 + cpp correct, py3 incorrect; 1000B: py3 correct; 1000C is unjudgeable, not sampled
    assert re.search(r"^ok +ccplus/1000A +3/3 agree$", out.stdout, re.M)
    assert "agreement 100.0% over 4 submissions; skipped (language not judged): 1 java, 1 py2" in out.stdout
    missing = run_cli("problems", "calibrate", "--bench", "ccplus", "--db", str(db_path))
    assert missing.returncode == 2 and "needs --path" in missing.stderr
