"""`samples import`: a LiveCodeBench custom_evaluator file for two LCB problems (fixtures in the real
published format, tests/problems/test_loaders.py) judged, stored and shown; every bad file refused in
one line with nothing stored; the same file twice adds nothing; our JSONL with α points and completions."""

import json

import pytest

from backend.errors import UserError
from backend.problems.importing import run_import
from backend.problems.lcb import LCBFilter
from backend.records import Checkpoint, Evaluation, Experiment, Sample
from backend.samples.importer import import_samples
from backend.samples.spec import SampleImportSpec
from backend.store import Store
from tests.conftest import ROOT, run_cli
from tests.problems.test_loaders import lcb_row

LAB = ROOT / "artifacts" / "lab" / "checkpoints"
GOOD = "a, b = map(int, input().split())\nprint(a + b)\n"
WRONG = "print(3)\n"
TWO_SUM = "class Solution:\n    def twoSum(self, nums, target):\n        seen = {}\n        for i, x in enumerate(nums):\n            if target - x in seen:\n                return [seen[target - x], i]\n            seen[x] = i\n"  # noqa: E501
TWO_SUM_WRONG = "class Solution:\n    def twoSum(self, nums, target):\n        return [0, 0]\n"
TABLES = (Experiment, Checkpoint, Sample, Evaluation)


@pytest.fixture
def lcb_store(tmp_path, monkeypatch):
    """A database holding two LiveCodeBench problems, imported from files in LCB's published format."""
    monkeypatch.setenv("FLAB_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "code_generation_lite"
    folder.mkdir()
    rows = [lcb_row("abc001_a", "2023-05-01T00:00:00"), lcb_row("lc-1", "2023-06-01T00:00:00", functional=True)]
    (folder / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    store = Store(tmp_path / "samples.duckdb")
    run_import(store, "lcb", folder, LCBFilter("release_v1"), progress=False)
    return store


def custom_evaluator(path, entries) -> str:
    path.write_text(json.dumps([{"question_id": q, "code_list": codes} for q, codes in entries]))
    return str(path)


def counts(store) -> list[int]:
    return [store.count(t) for t in TABLES]


def spec(file, **kw) -> SampleImportSpec:
    return SampleImportSpec(file=str(file), backend="none", **kw)


@pytest.mark.slow
def test_a_custom_evaluator_file_is_judged_stored_once_and_shown_on_the_frontier(lcb_store, tmp_path, monkeypatch):
    from backend.analysis.provenance import from_store
    from tests.pages.test_apptest import app

    file = custom_evaluator(
        tmp_path / "outputs.json", [("abc001_a", [GOOD, WRONG]), ("lc-1", [TWO_SUM, TWO_SUM_WRONG])]
    )
    done = import_samples(lcb_store, spec(file, checkpoint="my-model"), progress=False)
    assert (done.samples, done.evaluations, done.total) == (4, 4, 4)
    verdicts = {(e.problem_id, e.sample_idx): e.verdict for e in lcb_store.select(Evaluation)}
    assert verdicts == {
        ("lcb/abc001_a", 0): "AC",
        ("lcb/abc001_a", 1): "WA",
        ("lcb/lc-1", 0): "AC",
        ("lcb/lc-1", 1): "WA",
    }
    (exp,) = lcb_store.select(Experiment)
    assert exp.kind == "import" and exp.spec["format"] == "lcb" and exp.spec["n"] == 2
    (ckpt,) = lcb_store.select(Checkpoint)
    assert (ckpt.label, ckpt.kind, ckpt.path) == ("my-model", "trained", "my-model")  # a free label, no folder
    provenance = from_store(lcb_store, exp.id).fields()
    assert provenance["samples"].startswith("imported from outputs.json (LiveCodeBench custom_evaluator JSON, sha256 ")
    assert provenance["seeds"] == "not recorded"  # made elsewhere: their seeds are not known here

    before = counts(lcb_store)
    again = import_samples(lcb_store, spec(file, checkpoint="my-model"), progress=False)
    assert (again.samples, again.evaluations) == (0, 0) and counts(lcb_store) == before
    assert "nothing added" in again.line()

    frontier = app(lcb_store.path, monkeypatch, "frontier", {"exp": exp.id})
    assert not frontier.exception, frontier.exception
    (row,) = frontier.dataframe[0].value.to_dict("records")
    assert row["label"] == "my-model" and row["correct"] == pytest.approx(0.5)
    overview = app(lcb_store.path, monkeypatch, "overview", {"exp": exp.id})
    assert any(f"**{exp.id}**: samples imported from outputs.json" in m.value for m in overview.markdown)


@pytest.mark.slow
def test_one_unknown_id_stores_nothing_and_is_named_exit_2(lcb_store, tmp_path):
    file = custom_evaluator(tmp_path / "o.json", [("abc001_a", [GOOD]), ("abc999_z", [GOOD])])
    done = run_cli("samples", "import", file, "--checkpoint", "m", "--db", str(lcb_store.path))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "error: o.json: 1 problem id(s) not in the database, nothing imported: lcb/abc999_z; "
        "see `python -m backend problems list`"
    ]
    assert counts(Store(lcb_store.path)) == [0, 0, 0, 0]  # no experiment, checkpoint, sample or evaluation


def test_unknown_ids_are_counted_and_the_first_five_named(lcb_store, tmp_path):
    file = custom_evaluator(tmp_path / "o.json", [(f"q{i}", [GOOD]) for i in range(7)])
    before = counts(lcb_store)
    with pytest.raises(UserError, match=r"7 problem id\(s\) not in the database, nothing imported: "
                       r"lcb/q0, lcb/q1, lcb/q2, lcb/q3, lcb/q4, … 2 more"):  # fmt: skip
        import_samples(lcb_store, spec(file, checkpoint="m"), progress=False)
    assert counts(lcb_store) == before


def test_a_missing_benchmark_names_the_command_that_brings_it(tmp_path):
    store = Store(tmp_path / "empty.duckdb")
    file = custom_evaluator(tmp_path / "o.json", [("abc001_a", [GOOD])])
    with pytest.raises(UserError, match=r"names LiveCodeBench problems \(lcb/abc001_a\) and the database holds none; "
                       r"bring them with `python -m backend problems import lcb PATH \(or --hub\)`"):  # fmt: skip
        import_samples(store, spec(file, checkpoint="m"), progress=False)
    assert counts(store) == [0, 0, 0, 0]


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ('{"problem_id": "lcb/abc001_a", "checkpoint": "m", "code": "x"}\nnot json\n{"problem_id": 3}\n',
         r"2 malformed line\(s\), nothing imported: line 2: not JSON .*; line 3: 'problem_id' is missing"),
        ('{"problem_id": "lcb/abc001_a", "checkpoint": "m", "code": "x", "completion": "y"}\n',
         r"line 1: give one of 'completion' .* or 'code'"),
        ('{"problem_id": "lcb/abc001_a", "checkpoint": "m", "code": "x", "alpha": 0.5}\n',
         r"line 1: alpha needs 'low' and 'high'"),
        ('{"problem_id": "lcb/abc001_a", "checkpoint": "m", "code": "x", "setting": "chatty"}\n',
         r"line 1: setting 'chatty' is not one of reasoning, tool, agentic"),
        ('{"problem_id": "lcb/abc001_a", "checkpoint": "m", "code": "x", "sample_idx": 0}\n\n'
         '{"problem_id": "lcb/abc001_a", "checkpoint": "m", "code": "y", "sample_idx": 0}\n',
         r"1 duplicate sample\(s\), nothing imported: lcb/abc001_a sample 0 of m \(lines 1 and 3\)"),
    ],
)  # fmt: skip
def test_a_bad_jsonl_file_is_refused_whole_in_one_line(lcb_store, tmp_path, content, words):
    (tmp_path / "s.jsonl").write_text(content)
    before = counts(lcb_store)
    with pytest.raises(UserError, match=words) as err:
        import_samples(lcb_store, spec(tmp_path / "s.jsonl"), progress=False)
    assert "\n" not in str(err.value) and counts(lcb_store) == before


def test_a_question_twice_in_a_custom_evaluator_file_is_a_duplicate(lcb_store, tmp_path):
    file = custom_evaluator(tmp_path / "o.json", [("abc001_a", [GOOD]), ("lc-1", [TWO_SUM]), ("abc001_a", [WRONG])])
    with pytest.raises(UserError, match=r"1 duplicate sample\(s\), nothing imported: lcb/abc001_a \(entries 1 and 3\)"):
        import_samples(lcb_store, spec(file, checkpoint="m"), progress=False)
    with pytest.raises(UserError, match="names no checkpoint: give --checkpoint"):
        import_samples(lcb_store, spec(file), progress=False)


@pytest.mark.slow
def test_jsonl_completions_folders_and_alpha_points(lcb_store, tmp_path):
    """Code is extracted from a completion as from a sweep's samples; a folder is registered by its
    content, an α point with its endpoints; sample_idx counts a checkpoint's lines of a problem."""
    from backend.merge.checkpoints import ensure_registered

    lines = [
        {"problem_id": "lcb/abc001_a", "checkpoint": str(LAB / "low"), "completion": f"Sure.\n```python\n{GOOD}```"},
        {"problem_id": "lcb/abc001_a", "checkpoint": str(LAB / "low"), "completion": "I cannot."},
        {"problem_id": "lcb/abc001_a", "checkpoint": "mid", "alpha": 0.5, "low": str(LAB / "low"),
         "high": "org/high-run", "code": WRONG},
    ]  # fmt: skip
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    import_samples(lcb_store, spec(tmp_path / "s.jsonl"), progress=False)
    low = ensure_registered(lcb_store, LAB / "low")
    samples = {(s.checkpoint_id, s.sample_idx): s for s in lcb_store.select(Sample)}
    verdicts = {(e.checkpoint_id, e.sample_idx): e.verdict for e in lcb_store.select(Evaluation)}
    assert samples[(low.id, 0)].code == GOOD and verdicts[(low.id, 0)] == "AC"
    assert samples[(low.id, 1)].extract_error == "no fenced code block in the answer"
    assert verdicts[(low.id, 1)] == "FORMAT"
    (mid,) = [c for c in lcb_store.select(Checkpoint) if c.alpha is not None]
    high = next(c for c in lcb_store.select(Checkpoint) if c.label == "org/high-run")
    assert (mid.kind, mid.alpha, mid.label, mid.low_id, mid.high_id) == ("merged", 0.5, "α=0.5", low.id, high.id)
    assert verdicts[(mid.id, 0)] == "WA"


@pytest.mark.slow
def test_the_launch_forms_import_takes_the_same_file_and_says_what_is_wrong(lcb_store, tmp_path, monkeypatch):
    from tests.pages.test_apptest import app

    good = custom_evaluator(tmp_path / "good.json", [("abc001_a", [GOOD, WRONG])])
    bad = custom_evaluator(tmp_path / "bad.json", [("abc001_a", [GOOD]), ("zz_9", [GOOD])])
    at = app(lcb_store.path, monkeypatch, "launch")
    at.selectbox(key="samples-backend").set_value("none")
    at.text_input(key="samples-checkpoint").set_value("form-model")
    at.text_input(key="samples-file").set_value(bad)
    next(b for b in at.button if b.label == "Import samples").click().run()
    unknown = "bad.json: 1 problem id(s) not in the database, nothing imported: lcb/zz_9"
    assert [e.value for e in at.error] == [f"{unknown}; see `python -m backend problems list`"]
    assert counts(lcb_store)[0] == 0  # no experiment
    at.text_input(key="samples-file").set_value(good)
    next(b for b in at.button if b.label == "Import samples").click().run()
    assert not at.error and at.success[0].value.endswith("2 samples stored, 2 judged")
    verdicts = sorted(e.verdict for e in lcb_store.select(Evaluation))
    assert verdicts == ["AC", "WA"]
