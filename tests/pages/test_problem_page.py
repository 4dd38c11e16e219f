"""The Problem page's samples view (issue #48): tests that never ran say "not run", memory says what
it measures, and the first failing test's input is shown (2 kB) and offered whole."""

import pytest

from backend.records import Checkpoint, Evaluation, Experiment, Problem, Sample, Test, TestResult
from dashboard.samples import INPUT_SHOWN, MEMORY
from tests.pages.test_apptest import app

LONG = "7 " * 3000  # 6 000 characters: more than the page shows


@pytest.fixture
def judged(store):
    store.put([Experiment(id="exp-p", kind="sweep", name="problem page", spec={})])
    store.put(
        [
            Checkpoint(id=c, path=f"/x/{c}", kind="merged", alpha=a, label=f"α={a:g}")
            for c, a in (("m0", 0.0), ("m1", 1.0))
        ]
    )
    store.put([Problem(id="t/p", bench="t", title="P", statement="S", time_limit_s=1.0, memory_limit_mb=256)])
    store.put([Test(problem_id="t/p", idx=i, input=text, output="1\n", input_len=len(text), tier=1 + i)
               for i, text in enumerate(["1\n", LONG, "2\n" * 5000])])  # fmt: skip
    results = [TestResult(0, 2, 1, "AC", cpu_s=0.01, mem_mb=0.75),
               TestResult(1, len(LONG), 2, "WA", cpu_s=0.02, mem_mb=1.5),
               TestResult(2, 10000, 3, None)]  # fmt: skip
    for c in ("m0", "m1"):
        store.put([Sample(experiment_id="exp-p", checkpoint_id=c, problem_id="t/p", sample_idx=0, setting="reasoning",
                          completion="```python\nprint(1)\n```", code="print(1)\n")])  # fmt: skip
        store.put([Evaluation(experiment_id="exp-p", checkpoint_id=c, problem_id="t/p", sample_idx=0,
                              outcome="correctness_failure", verdict="WA", test_results=results)])  # fmt: skip
    return store


def test_not_run_memory_baseline_and_the_failing_input(judged, db_path, monkeypatch):
    at = app(db_path, monkeypatch, "problem", {"exp": "exp-p", "problem": "t/p"})
    assert not at.exception, at.exception
    ladder = at.dataframe[1].value  # after the outcomes per checkpoint
    assert MEMORY in ladder.columns and "above the interpreter's baseline" in MEMORY
    assert list(ladder["verdict"]) == ["AC", "WA", "not run"]
    assert list(ladder["CPU s"]) == ["0.010", "0.020", "not run"]
    assert list(ladder[MEMORY]) == ["0.75", "1.50", "not run"]  # MB, not "0.750000"
    shown = [c.value for c in at.code if c.value.startswith("7 7 ")]
    assert shown and shown[0] == LONG[:INPUT_SHOWN] + "\n…"  # the failing test's (test 1's) first 2 kB
    assert [d.label for d in at.get("download_button")].count("Download the whole input") == 2  # both sides


def test_heading_is_the_problems_title_and_the_ladder_rows_have_the_height_it_is_sized_for(
    judged, db_path, monkeypatch
):
    from dashboard.samples import LADDER_ROW

    at = app(db_path, monkeypatch, "problem", {"exp": "exp-p", "problem": "t/p"})
    assert [t.value for t in at.title] == ["P"]  # the problem's own title, not "Problem"
    # the grid's height is its rows at this height, plus a scroll bar: a grid that chose its own
    # row height clipped the last row
    assert at.dataframe[1].proto.row_height == LADDER_ROW
