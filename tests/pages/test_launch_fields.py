"""Launch (issue #48): a registered checkpoint and a typed path cannot both be set."""

from backend.records import Checkpoint
from tests.pages.test_apptest import app


def test_a_picked_checkpoint_closes_the_path_box(store, db_path, monkeypatch, tmp_path):
    folder = tmp_path / "low"
    folder.mkdir()
    store.put([Checkpoint(id="ck-low", path=str(folder), kind="trained", label="low run")])
    at = app(db_path, monkeypatch, "launch")
    assert not at.text_input(key="low-path").disabled  # nothing picked: type a path
    at.text_input(key="low-path").set_value("/typed/elsewhere").run()
    at.selectbox(key="low-pick").set_value(str(folder)).run()
    assert at.text_input(key="low-path").disabled  # the typed path no longer counts, and says so
    at.button(key="sweep-launch").click().run()
    assert not any("/typed/elsewhere" in e.value for e in at.error)
