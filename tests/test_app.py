from streamlit.testing.v1 import AppTest

from backend.records import Experiment
from backend.store import Store


def _app(db_path, monkeypatch):
    monkeypatch.setenv("FLAB_DB", str(db_path))
    return AppTest.from_file("../app.py", default_timeout=30).run()


def test_overview_on_empty_database(db_path, monkeypatch):
    Store(db_path)
    at = _app(db_path, monkeypatch)
    assert not at.exception
    assert any("No experiments yet" in i.value for i in at.info)


def test_overview_lists_experiments(db_path, monkeypatch):
    Store(db_path).put([Experiment(id="exp-7", kind="sweep", name="alpha sweep", note="synthetic")])
    at = _app(db_path, monkeypatch)
    assert not at.exception
    assert at.dataframe[0].value["id"].tolist() == ["exp-7"]


def test_overview_shows_each_experiments_prompt_format(db_path, monkeypatch):
    Store(db_path).put([Experiment(id="exp-base", kind="sweep", name="base sweep", spec={"prompt_format": "plain"}),
                        Experiment(id="exp-old", kind="sweep", name="older sweep", spec={"n": 4})])  # fmt: skip
    shown = _app(db_path, monkeypatch).dataframe[0].value
    formats = dict(zip(shown["id"], shown["prompt format"], strict=True))
    assert formats == {"exp-base": "plain", "exp-old": "chat"}  # stored before the field: chat, the only format then


def test_overview_says_when_the_database_is_missing(tmp_path, monkeypatch):
    at = _app(tmp_path / "absent.duckdb", monkeypatch)
    assert any("db init" in e.value for e in at.error)
