"""Every page renders on an empty and on a populated database; forms validate; links are URLs."""

import json
import re

import pytest
from streamlit.testing.v1 import AppTest

from backend.records import Job
from tests.by_hand import solved_pairs
from tests.conftest import ROOT

PAGES = ["overview", "frontier", "churn", "passk", "checkpoints", "problem", "training", "launch", "jobs"]


def app(db_path, monkeypatch, page, params=None):
    monkeypatch.setenv("FLAB_DB", str(db_path))
    at = AppTest.from_file("../../app.py", default_timeout=60)
    for k, v in (params or {}).items():
        at.query_params[k] = v
    at.switch_page(f"dashboard/{page}.py")
    return at.run()


EMPTY = {  # what each page says on a database with nothing in it
    "overview": "No experiments yet in", "frontier": "No experiment with results yet",
    "churn": "No experiment with results yet", "passk": "No experiment with results yet",
    "checkpoints": "No experiment with results yet",
    "problem": "No experiment with results yet", "training": "No RL runs yet", "jobs": "No jobs yet",
}  # fmt: skip


def traces(at) -> list[list[str]]:
    return [[t.get("name", "") for t in json.loads(c.proto.spec)["data"]] for c in at.get("plotly_chart")]


@pytest.mark.parametrize("page", PAGES)
def test_pages_render_on_an_empty_database(store, db_path, monkeypatch, page):
    at = app(db_path, monkeypatch, page)
    assert not at.exception, at.exception
    if page == "launch":
        assert [b.label for b in at.button] == [
            "Launch sweep",
            "Launch eval",
            "Launch RL job",
            "Import",
            "Import samples",
        ]
    else:
        assert [i.value for i in at.info if i.value.startswith(EMPTY[page])], [i.value for i in at.info]
    assert traces(at) == []


@pytest.mark.slow
def test_pages_show_the_populated_database(populated, db_path, monkeypatch):
    """Each page shows what the fixture holds: 6 checkpoints (5 α points and one independent) × 6 problems
    × 6 samples."""
    at = app(db_path, monkeypatch, "overview", {"exp": "exp-dash"})
    assert list(at.dataframe[0].value["id"]) == ["exp-dash"]
    at.session_state["open-glance"] = True  # the newest experiment's chart waits in a section
    at.run()
    assert len(traces(at)[0]) == 8  # the four outcome classes, each a line and its CI band
    at = app(db_path, monkeypatch, "frontier", {"exp": "exp-dash"})
    # outcomes (4 classes, each a band and a line), scatter (each point's CI bars, merged, not merged, the SFT's
    # distance to the interpolation), solve rate, trend (a band and a line per failure class)
    assert [len(t) for t in traces(at)] == [8, 6 + 3, 2, 4]
    assert len(at.dataframe[0].value) == 6  # one frontier row per checkpoint
    # one word, one definition: the caption, the solve rate figure's title and the sidebar's threshold
    definition = "Solve rate: a problem's share of correct samples (pass@1), averaged over problems."
    assert any(definition in c.value for c in at.caption)
    title = json.loads(at.get("plotly_chart")[2].proto.spec)["layout"]["title"]
    assert definition in title["subtitle"]["text"].replace("<br>", " ")  # under the title, wrapped to its width
    assert [s.label for s in at.sidebar.slider if "olve" in s.label] == ["Solved = solve rate at least"]
    at = app(db_path, monkeypatch, "churn", {"exp": "exp-dash"})
    (heatmap,) = at.get("plotly_chart")
    grid = json.loads(heatmap.proto.spec)["data"][0]  # square markers, one per (problem, checkpoint)
    assert len(set(grid["x"])) == 6 and len(set(grid["y"])) == 6 and len(grid["x"]) == 36
    union = {p for c, p in solved_pairs(populated, "exp-dash", 0.5)}
    assert int(at.metric[1].value) == len(union)
    at = app(db_path, monkeypatch, "passk", {"exp": "exp-dash"})
    names = traces(at)[0]
    assert {"m0", "m1"} <= set(names) and "pool: all interpolated, 3 checkpoints" in names  # endpoints by default
    assert any("common seeds" in i.value for i in at.info)  # a spec stored without common_seeds drew them
    assert {"all interpolated", "greedy"} <= set(traces(at)[1])  # the gain curves, one per pool with its band
    at = app(db_path, monkeypatch, "problem", {"exp": "exp-dash", "problem": "t/p0"})
    assert any(s.value == "Samples compared across α" for s in at.subheader)
    assert any(len(d.value) == 6 for d in at.dataframe)  # one row per checkpoint
    for page in ("training", "jobs"):
        at = app(db_path, monkeypatch, page, {"exp": "exp-dash"})
        assert at.info[0].value.startswith(EMPTY[page])  # the fixture has no RL run and no job
    for page in PAGES:
        assert not app(db_path, monkeypatch, page, {"exp": "exp-dash"}).exception


def test_passk_says_nothing_of_seeds_when_the_checkpoints_drew_disjoint_ones(populated, db_path, monkeypatch):
    from backend.records import Experiment

    spec = populated.get(Experiment, "exp-dash").spec
    populated.update(Experiment, ("exp-dash",), spec={**spec, "common_seeds": False})
    at = app(db_path, monkeypatch, "passk", {"exp": "exp-dash"})
    assert not at.exception and not any("common seeds" in i.value for i in at.info)


def test_frontier_shows_recovery_trend_bands_and_format_causes(populated, db_path, monkeypatch):
    """The independent checkpoint r3's distance to the interpolation curve on the scatter and in a
    table, the failure shares' simultaneous bands, and format failures by cause (all format
    failures of the fixture hold no code: its samples end with finish reason None, verdict FORMAT)."""
    at = app(db_path, monkeypatch, "frontier", {"exp": "exp-dash"})
    at.session_state["open-trend"] = at.session_state["open-format"] = True  # sections computed once opened
    at.run()
    assert not at.exception, at.exception
    names = [n for fig in traces(at) for n in fig]
    assert "r3: distance to interpolation" in names and any("simultaneous 95% band" in n for n in names)
    assert any("recover the checkpoints" in c.value for c in at.caption)
    slopes = next(d.value for d in at.dataframe if "slope_lo" in d.value.columns)
    assert (slopes["slope_lo"] <= slopes["slope"]).all() and (slopes["slope"] <= slopes["slope_hi"]).all()
    causes = next(d.value for d in at.dataframe if "format_no_code" in d.value.columns)
    assert (causes["format_truncated"] == 0).all() and (causes["format_no_code"] > 0).all()
    assert any("--opt-min-tier" in c.value for c in at.caption)  # the page says which rule its numbers use


def test_frontier_tier_rule_counts_tiny_input_time_outs_as_correctness_failures(populated, db_path, monkeypatch):
    """?tier=2: a time-out first failing at tier 1 counts as a correctness failure in the Frontier
    table, one at tier 4 stays an optimization failure; expected shares counted directly from the
    stored evaluations (per problem, then averaged), and the caption names the rule."""
    import dataclasses

    from backend.records import Evaluation

    evals = [dataclasses.replace(e, first_failing_tier=(1 if e.sample_idx % 2 == 0 else 4))
             if e.outcome == "optimization_failure" else e for e in populated.select(Evaluation)]  # fmt: skip
    populated.put(evals)
    at = app(db_path, monkeypatch, "frontier", {"exp": "exp-dash", "tier": "2"})
    assert not at.exception, at.exception
    assert any("below tier 2" in c.value and "--opt-min-tier 2" in c.value for c in at.caption)
    table = next(d.value for d in at.dataframe if "optimization_share_of_failures" in d.value.columns)
    moved = {id(e) for e in evals if e.outcome == "optimization_failure" and e.first_failing_tier == 1}
    opt, corr = {}, {}  # (checkpoint, problem) → counts under the rule
    for e in evals:
        cell = (e.checkpoint_id, e.problem_id)
        opt[cell] = opt.get(cell, 0) + (e.outcome == "optimization_failure" and id(e) not in moved)
        corr[cell] = corr.get(cell, 0) + (e.outcome == "correctness_failure" or id(e) in moved)
    for _, row in table.iterrows():  # 6 samples per cell; per problem, then averaged over the 6 problems
        c = row["checkpoint_id"]
        assert row["optimization_failure"] == pytest.approx(sum(opt[(c, f"t/p{p}")] for p in range(6)) / 36)
        assert row["correctness_failure"] == pytest.approx(sum(corr[(c, f"t/p{p}")] for p in range(6)) / 36)
    assert 0 < len(moved) < sum(e.outcome == "optimization_failure" for e in evals)


def test_query_params_select_experiment_and_filters(populated, db_path, monkeypatch):
    from backend.records import Experiment

    populated.put([Experiment(id="exp-other", kind="sweep", name="other", spec={})])
    at = app(db_path, monkeypatch, "frontier", {"exp": "exp-dash", "difficulty": "hard"})
    assert at.sidebar.selectbox[0].value == "exp-dash"
    assert at.sidebar.selectbox[1].value == "hard"
    assert "3 problems" in at.caption[0].value  # p1, p3, p5 are hard


def test_launch_form_validation_errors_appear(store, db_path, monkeypatch):
    at = app(db_path, monkeypatch, "launch")
    at.text_input(key="low-path").set_value("/nonexistent/low")
    at.text_input(key="high-path").set_value("/nonexistent/high")
    at.button[0].click().run()  # "Launch sweep"
    assert any("does not exist" in e.value for e in at.error)
    assert store.count(Job) == 0


def test_launch_bad_grid_is_reported_inline(store, db_path, monkeypatch, tmp_path):
    from backend.lab.tiny import make_tiny_checkpoint

    low, high = make_tiny_checkpoint(tmp_path / "low", seed=1), make_tiny_checkpoint(tmp_path / "high", seed=2)
    at = app(db_path, monkeypatch, "launch")
    at.text_input(key="low-path").set_value(str(low))
    at.text_input(key="high-path").set_value(str(high))
    at.text_input(key="sweep-alphas").set_value("2:-1:0.5")
    at.button[0].click().run()
    assert any("reversed" in e.value for e in at.error)
    assert store.count(Job) == 0


def test_valid_sweep_form_creates_a_job(store, db_path, monkeypatch, tmp_path):
    from backend.jobs import runner
    from backend.lab.tiny import make_tiny_checkpoint

    monkeypatch.setattr(runner, "start", lambda store, job_id, detach=True: 0)  # the job row is what this test checks
    low, high = make_tiny_checkpoint(tmp_path / "low", seed=1), make_tiny_checkpoint(tmp_path / "high", seed=2)
    at = app(db_path, monkeypatch, "launch")
    at.text_input(key="low-path").set_value(str(low))
    at.text_input(key="high-path").set_value(str(high))
    at.text_input(key="sweep-alphas").set_value("0,0.5,1")
    at.button[0].click().run()
    assert not at.error, [e.value for e in at.error]
    jobs = store.select(Job)
    assert len(jobs) == 1 and jobs[0].kind == "sweep" and jobs[0].status == "queued"
    assert any(jobs[0].id in s.value for s in at.success)


def test_import_form_needs_a_path_and_reports_bad_ones(store, db_path, monkeypatch, tmp_path):
    at = app(db_path, monkeypatch, "launch")
    form_select = next(s for s in at.selectbox if s.label == "Source")
    form_select.set_value("lcb")
    next(b for b in at.button if b.label == "Import").click().run()
    assert any("needs the local path" in e.value for e in at.error)
    next(t for t in at.text_input if t.label == "Local path (LiveCodeBench / CodeContests+)").set_value(
        str(tmp_path / "nope")
    )
    next(b for b in at.button if b.label == "Import").click().run()
    assert any("not found" in e.value for e in at.error)


@pytest.mark.slow
def test_export_all_figures_offers_a_zip(populated, db_path, monkeypatch):
    at = app(db_path, monkeypatch, "frontier", {"exp": "exp-dash"})
    next(b for b in at.button if b.label == "Export all figures of this experiment (zip)").click().run()
    assert not at.exception, at.exception
    assert any(d.label == "Download the zip" for d in at.get("download_button"))
    bar = at.get("progress")[0]  # the zip's progress bar ends on what it holds
    assert bar.proto.value == 100 and bar.proto.text.startswith("7 figures and their data in")


def test_training_page_draws_the_curves_of_an_rl_run(store, db_path, monkeypatch):
    from backend.records import Experiment, Metric

    store.put([Experiment(id="rl-x", kind="rl", name="GRPO test run", spec={})])
    store.put([Metric("rl-x", step, name, value) for step in (1, 2, 3) for name, value in
               (("reward_mean", step / 4), ("frac_correct", step / 4), ("frac_correctness_failure", 1 - step / 4),
                ("pass_R_1", 0.9), ("pass_R_inf", step / 4), ("kl", 0.01 * step))])  # fmt: skip
    at = app(db_path, monkeypatch, "training", {"run": "rl-x"})
    assert not at.exception, at.exception
    assert any("3 steps logged" in c.value for c in at.caption)
    charts = at.get("plotly_chart")
    assert len(charts) == 4  # reward, outcomes, pass per tier, KL (no completion lengths logged)


def test_rl_form_creates_an_rl_job(store, db_path, monkeypatch, tmp_path):
    from backend.jobs import runner
    from backend.lab.tiny import make_tiny_checkpoint

    base = make_tiny_checkpoint(tmp_path / "base")
    at = app(db_path, monkeypatch, "launch")
    at.text_input(key="rl-base-path").set_value(str(base))
    next(t for t in at.text_input if t.label == "Output folder").set_value(str(tmp_path / "out"))
    next(b for b in at.button if b.label == "Launch RL job").click().run()
    assert not at.exception, at.exception
    jobs = store.select(Job)
    assert [j.kind for j in jobs] == ["rl"], [e.value for e in at.error]
    if jobs[0].status in ("running", "queued"):
        runner.cancel(store, jobs[0].id)


def test_rl_form_reports_a_bad_batch_inline(store, db_path, monkeypatch, tmp_path):
    from backend.lab.tiny import make_tiny_checkpoint

    base = make_tiny_checkpoint(tmp_path / "base")
    at = app(db_path, monkeypatch, "launch")
    at.text_input(key="rl-base-path").set_value(str(base))
    next(t for t in at.text_input if t.label == "Output folder").set_value(str(tmp_path / "out"))
    next(n for n in at.number_input if n.label == "per_device_train_batch_size").set_value(6)
    next(b for b in at.button if b.label == "Launch RL job").click().run()
    assert any("multiple of num_generations" in e.value for e in at.error)
    assert store.count(Job) == 0


def test_overview_prints_findings_in_words_with_named_statistics_and_whole_criteria(populated, db_path, monkeypatch):
    from dashboard.experiment_view import ExperimentView

    at = app(db_path, monkeypatch, "overview", {"exp": "exp-dash"})
    assert not at.exception, at.exception
    table = at.table[0].value  # a static table: every cell printed whole, not cut at a column width
    rows = ExperimentView.build(db_path, "exp-dash").findings()
    words = {
        "shows": "shows",
        "does_not_show": "does not show",
        "underpowered": "underpowered",
        "not_tested": "not tested",
    }
    assert list(table["status"]) == [words[r["status"]] for r in rows]
    for r, (_, shown) in zip(rows, table.iterrows(), strict=True):
        if r["ci_low"] is None:
            assert shown["estimate"] == shown["CI"] == "–"
        else:  # the statistic printed as a paper prints it, its CI with the level it was computed at
            assert shown["estimate"] == f"{r['statistic']:+.3f}"
            assert shown["CI"].endswith(f"CI [{r['ci_low']:+.3f}, {r['ci_high']:+.3f}]")
            # the sentence names the part that decided the status
            assert any(shown["in words"].startswith(f"{p['name']}: ") for p in r["parts"]), shown["in words"]
        whole = (
            r["criterion"]
            if r["status"] != "not_tested"
            else f"not tested: {r['reason']}. The criterion: {r['criterion']}"
        )
        assert shown["criterion"] == whole and len(whole) > 100
    assert "None" not in table.to_string()


@pytest.mark.slow
@pytest.mark.skipif(not (ROOT / "artifacts" / "lab" / "recipe.json").is_file(), reason="no committed lab artifacts")
def test_overview_states_the_lab_findings(lab_copy, db_path, monkeypatch):
    lab_copy(db_path)
    at = app(db_path, monkeypatch, "overview")
    assert not at.exception, at.exception
    assert not [t for t in traces(at) if "brute-force-style" in t]  # the styles wait until opened (slow to match)
    at.session_state["open-styles"] = True
    at.run()
    assert any("Miniature lab" in s.value for s in at.subheader)
    assert any("four findings" in s.value for s in at.subheader)
    table = at.table[0].value  # the selected experiment's findings, one row per finding
    assert list(table.index) == ["F1 frontier", "F2 extrapolation", "F3 churn", "F4 ensemble"]
    assert set(table["status"]) <= {"shows", "does not show", "underpowered", "not tested"}  # words, not snake case
    number = r"[+-]\d\.\d{3}"
    assert all(re.fullmatch(rf"{number}|–", e) for e in table["estimate"])
    # the CI says its level, and never holds a noise model's quantile (churn names that in its sentence)
    assert all(re.fullmatch(rf"(\d+ % )?CI \[{number}, {number}\]|–", c) for c in table["CI"])
    assert all(w.endswith(".") and ("criterion" in w or w.startswith("Not tested")) for w in table["in words"])
    assert all(len(c) > 40 for c in table["criterion"])  # in full
    styles = next(t for t in traces(at) if "brute-force-style" in t)  # program styles along α
    assert styles == ["brute-force-style", "reference-style", "buggy-fast-style", "like no SFT program", "no program"]
    built = json.loads((ROOT / "artifacts" / "lab" / "report.json").read_text())
    if "withheld" in built:  # the fourth design: its pre-registered tests beside the kept set's, as the build reported
        tests = at.table[1].value
        assert list(tests.index) == ["T1a", "T1b", "T1c", "(T1a)", "(T1b)", "(T1c)", "T2"]
        assert list(tests["set"]) == ["withheld"] * 3 + ["kept"] * 3 + ["withheld − kept"]
        assert tests["status"].iloc[2] == "trivially met"
        for i, name in enumerate(["withheld", "kept"]):
            parts = next(r for r in built[name] if r["finding"] == "frontier")["parts"]
            for j, part in enumerate(parts):  # the estimates the build stored, to the printed digit
                assert tests["estimate [95 % CI]"].iloc[3 * i + j].startswith(f"{part['statistic']:+.3f} ["), (name, j)


def test_a_bad_exp_link_says_so_and_a_missing_note_shows_nothing(populated, db_path, monkeypatch):
    from backend.records import Experiment

    populated.update(Experiment, ("exp-dash",), note=None)
    at = app(db_path, monkeypatch, "frontier", {"exp": "no-such-experiment"})
    assert not at.exception, at.exception
    assert any("No experiment 'no-such-experiment'" in w.value for w in at.warning)
    assert at.sidebar.selectbox[0].value == "exp-dash"  # the newest, as the warning says
    assert not any("What this shows" in c.value for c in at.sidebar.caption)  # not "nan"


def test_launch_form_messages_are_in_the_forms_words(populated, db_path, monkeypatch):
    at = app(db_path, monkeypatch, "launch")
    at.button(key="eval-launch").click().run()
    assert [e.value for e in at.error] == ["Checkpoint folders: give at least one"]
    at = app(db_path, monkeypatch, "launch")
    at.text_area[0].set_value("/some/checkpoint")
    at.number_input(key="eval-n").set_value(0)
    at.button(key="eval-launch").click().run()
    assert [e.value for e in at.error] == ["Samples per problem: at least 1"]
    assert populated.count(Job) == 0


def solved_by_hand(store, at_least: float) -> dict[str, int]:
    from collections import Counter

    return dict(Counter(c for c, _ in solved_pairs(store, "exp-dash", at_least)))


@pytest.mark.parametrize("at_least", [0.5, 0.2])
def test_one_solved_threshold_drives_every_count(populated, db_path, monkeypatch, at_least):
    at = app(db_path, monkeypatch, "churn", {"exp": "exp-dash", "solved": str(at_least)})
    assert not at.exception, at.exception
    assert at.sidebar.slider(key="view-solved").value == at_least
    assert any(f"solved = solve rate ≥ {at_least:.0%}" in c.value for c in at.caption)
    by_hand = solved_by_hand(populated, at_least)
    assert int(at.metric[2].value) == max(by_hand.values())  # best single checkpoint's solved count
    # the choice follows the session to pass@k, whose unique-solves list says the same threshold
    at.switch_page("dashboard/passk.py").run()
    assert at.sidebar.slider(key="view-solved").value == at_least
    assert any(f"solved = solve rate ≥ {at_least:.0%}" in c.value for c in at.caption)


def values(array) -> list[float]:
    """A trace's numbers: plotly sends numpy arrays as base64 {"dtype", "bdata"}."""
    import base64

    import numpy as np

    if isinstance(array, dict):
        return np.frombuffer(base64.b64decode(array["bdata"]), dtype=array["dtype"]).tolist()
    return list(array)


def test_passk_draws_ci_bands_and_overlays_pools_of_two_experiments(two_experiments, db_path, monkeypatch):
    """pass@k bands per curve; with ?with= the pools of both experiments on one figure. The m1
    band at k = 1 is checked against the store's correct counts: the interval over problems of c/n
    (t, each end widened where Hall's skewness correction reaches farther; tests/analysis/test_passk_bands.py)."""
    import statistics

    import plotly.io

    from backend.records import Evaluation
    from tests.analysis.test_passk_bands import reference

    at = app(db_path, monkeypatch, "passk", {"exp": "exp-dash"})
    fig = plotly.io.from_json(at.get("plotly_chart")[0].proto.spec)  # decodes plotly's binary arrays
    m1 = next(t for t in fig.data if t.name == "m1")
    band = next(t for t in fig.data if t.name == "m1: 95% CI")
    rows = two_experiments.select(Evaluation, {"experiment_id": "exp-dash", "checkpoint_id": "m1"})
    rates = [
        statistics.mean(r.outcome == "correct" for r in rows if r.problem_id == p) for p in {r.problem_id for r in rows}
    ]
    lo, hi = reference(rates)
    assert values(m1.y)[0] == pytest.approx(statistics.mean(rates))
    assert values(band.y)[0] == pytest.approx(hi, abs=1e-5)  # hi at k = 1
    assert values(band.y)[-1] == pytest.approx(lo, abs=1e-5)  # lo at k = 1
    assert list(fig.layout.yaxis.range) != [0, 1.02]

    at = app(db_path, monkeypatch, "passk", {"exp": "exp-dash", "with": "exp-dash-b"})
    assert not at.exception, at.exception
    fig = plotly.io.from_json(at.get("plotly_chart")[0].proto.spec)
    lines = [t for t in fig.data if t.mode == "lines" and t.fill != "toself"]  # curves, not their bands
    names = [t.name for t in lines]
    for exp in ("dashboard test sweep (exp-dash)", "second sweep (exp-dash-b)"):
        assert f"{exp}: best single (held out)" in names and f"{exp}: all interpolated, 3 checkpoints" in names
    colors = {t.name.split(": ")[0]: t.line.color for t in lines}
    assert len(set(colors.values())) == 2  # one colour per experiment
    assert len([t for t in fig.data if t.fill == "toself"]) == len(lines)  # a band for every curve


def test_the_outcome_chart_can_stay_stacked(populated, db_path, monkeypatch):
    """?stack=on: the four fractions stacked (they add up to 1) instead of one panel per class with its band."""
    at = app(db_path, monkeypatch, "frontier", {"exp": "exp-dash", "stack": "on"})
    assert not at.exception, at.exception
    outcomes = json.loads(at.get("plotly_chart")[0].proto.spec)["data"]
    assert [t.get("stackgroup") for t in outcomes] == ["s1"] * 4 and not [
        t for t in outcomes if t.get("fill") == "toself"
    ]
    assert at.sidebar.toggle[0].value is True


def test_the_checkpoints_page_keeps_k_in_the_link_and_offers_csv_and_latex(populated, db_path, monkeypatch):
    from backend.analysis.checkpoints import checkpoint_table
    from backend.analysis.frame import to_outcomes

    at = app(db_path, monkeypatch, "checkpoints", {"exp": "exp-dash", "k": "3"})
    assert not at.exception, at.exception
    grid = at.dataframe[0].value
    expected = checkpoint_table(to_outcomes(populated.outcome_counts("exp-dash")), k=3)
    assert list(grid["label"]) == expected["label"].to_list() and len(grid) == 6  # one row per checkpoint
    assert list(grid["pass@3"]) == pytest.approx(expected["pass_at_k"].to_list())
    assert list(grid["tier"]) == expected["tier"].to_list()
    assert at.query_params["k"] == ["3"] if isinstance(at.query_params["k"], list) else at.query_params["k"] == "3"
    labels = {b.label for b in at.get("download_button")}
    assert {"CSV", "Parquet", "LaTeX (booktabs)"} <= labels
    at = app(db_path, monkeypatch, "checkpoints", {"exp": "exp-dash", "k": "99"})  # the fixture has 6 samples a cell
    assert [w.value for w in at.warning if "k of pass@k" in w.value] == [
        "“k of pass@k” has no choice '99' here (from the link or an earlier page); showing 6 instead."
    ]
