"""The Frontier page and the Overview say what their numbers leave out (issue 56): sandbox errors
per checkpoint, problems a finding could not use, and how tiny-input time-outs were counted. The
experiment is written into a real DuckDB file through the store; the counts are those written."""

import pytest

from tests.analysis.conftest import fill_experiment
from tests.analysis.test_one_estimator import CROSSOVER, crossover
from tests.pages.test_apptest import app, values


def test_frontier_and_overview_name_the_sandbox_errors_and_the_problems_left_out(store, db_path, monkeypatch):
    cells = crossover()
    cells[("a0", "p00")] += ["sandbox_error"] * 3
    cells[("a1", "p05")] += ["sandbox_error"]
    cells[("a0.5", "p39")] = ["correctness_failure"]  # one sample: F3 and F4 cannot split it
    fill_experiment(store, cells, CROSSOVER)
    at = app(db_path, monkeypatch, "frontier", {"exp": "exp-a"})
    assert not at.exception, at.exception
    warned = [w.value for w in at.warning if "sandbox errors" in w.value]
    assert len(warned) == 1 and warned[0].startswith("4 samples were sandbox errors") and "a0: 3, a1: 1" in warned[0]
    at = app(db_path, monkeypatch, "overview", {"exp": "exp-a"})
    assert not at.exception, at.exception
    lines = [w.value for w in at.warning]
    assert any(w.startswith("4 samples were sandbox errors") for w in lines)
    assert "F3 churn: 1 problem left out (fewer than 2 judged samples of a0.5)" in " ".join(lines)
    # F4 tests pass@4 whatever the counts (findings v4): a cell that cannot hold it leaves its problem out
    f4 = "F4 ensemble: 1 problem left out (fewer than 10 judged samples of a0.5: pass@4 cross-fitted needs 10 per cell"
    assert f4 in " ".join(lines)
    assert not any(w.startswith("F1") for w in lines)
    assert any("Time-outs on tiny inputs: every time or memory failure counts as an optimization failure" in c.value
               for c in at.caption)  # fmt: skip


def test_frontier_says_nothing_of_sandbox_errors_when_there_are_none(store, db_path, monkeypatch):
    fill_experiment(store, crossover(), CROSSOVER)
    at = app(db_path, monkeypatch, "frontier", {"exp": "exp-a"})
    assert not at.exception, at.exception
    assert not [w.value for w in at.warning if "sandbox" in w.value]


def test_passk_draws_the_best_single_held_out_as_the_gain_table_reports_it(store, db_path, monkeypatch, capsys):
    """The crossover: the page's best single curve is the gain table's held-out `pass_at_k` (as
    `analyze ensembles` prints it), at every k the gain table reaches (1…7 with 16 samples per cell),
    and the single curves drawn by default are the endpoints and the checkpoints that curve names."""
    import json

    import plotly.io

    from backend.cli.analyze import analyze_command

    fill_experiment(store, crossover(), CROSSOVER)
    analyze_command("ensembles", experiment="exp-a", db=db_path, as_json=True)
    best = [r for r in json.loads(capsys.readouterr().out)["gains"] if r["pool"] == "best single"]
    held = {r["k"]: r["pass_at_k"] for r in best}
    at = app(db_path, monkeypatch, "passk", {"exp": "exp-a"})
    assert not at.exception, at.exception
    fig = plotly.io.from_json(at.get("plotly_chart")[0].proto.spec)
    curve = next(t for t in fig.data if t.name.startswith("best single at each k: ") and "95% CI" not in t.name)
    assert [int(k) for k in values(curve.x)] == list(held) == list(range(1, 8))
    assert [float(y) for y in values(curve.y)] == pytest.approx([held[k] for k in range(1, 8)], abs=1e-12)
    singles = {t.name for t in fig.data if t.name and t.name.startswith("a") and "CI" not in t.name}
    assert singles == {"a0", "a1"} | {r["baseline"] for r in best}  # no in-sample pass@1 pick of its own


def test_passk_page_with_one_empty_cell_draws_its_curves_and_names_the_cell(store, db_path, monkeypatch):
    """α = 0.5 never judged on p07: the page still draws every curve (the pool's over the 39
    problems all its members have), and a warning names the empty cell."""
    import plotly.io

    cells = {k: v for k, v in crossover().items() if k != ("a0.5", "p07")}
    fill_experiment(store, cells, CROSSOVER)
    at = app(db_path, monkeypatch, "passk", {"exp": "exp-a"})
    assert not at.exception, at.exception
    assert any(w.value.startswith("Left out of the curves (no judged sample): a0.5 on p07") for w in at.warning)
    fig = plotly.io.from_json(at.get("plotly_chart")[0].proto.spec)
    # its size in its name; its band is named after it
    pool = next(t for t in fig.data if t.name.startswith("pool: all interpolated, ") and "95% CI" not in t.name)
    assert {row[2] for row in pool.customdata} == {39} and len(values(pool.x)) == 16
    assert next(t for t in fig.data if t.name == "a0").customdata[0][2] == 40
