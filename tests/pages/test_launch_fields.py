"""Launch (issue #48): an error appears at the field it is about, and a registered checkpoint and
a typed path cannot both be set."""

from streamlit.testing.v1.element_tree import Block, Error

from backend.records import Checkpoint, Job
from tests.pages.test_apptest import app


def after(at, key: str):
    """The element drawn right after the widget `key`, in the container that holds the widget
    (None where the widget is the container's last)."""
    for block in (n for n in at.main if isinstance(n, Block)):
        order = sorted(block.children)
        for i, idx in enumerate(order):
            if getattr(block.children[idx], "key", None) == key:
                return block.children[order[i + 1]] if i + 1 < len(order) else None
    raise KeyError(key)


def error_after(at, key: str) -> str | None:
    node = after(at, key)
    return node.value if isinstance(node, Error) else None


def test_a_bad_alpha_grid_is_reported_under_the_grid(store, db_path, monkeypatch):
    at = app(db_path, monkeypatch, "launch")
    at.text_input(key="low-path").set_value("/some/low")
    at.text_input(key="high-path").set_value("/some/high")
    at.text_input(key="sweep-alphas").set_value("2:-1:0.5")
    at.button(key="sweep-launch").click().run()
    # backend/alpha.py's rule for a range whose start is above its stop
    assert error_after(at, "sweep-alphas") == "α range '2:-1:0.5' is reversed; write -1:2:0.5"
    assert len(at.error) == 1  # there alone, not under the button as well
    assert store.count(Job) == 0
    at.text_input(key="sweep-alphas").set_value("0, 1").run()  # the next change drops it, as it did the button's
    assert not at.error and after(at, "sweep-alphas").key == "sweep-bench-builtin"


def test_a_bad_number_is_reported_under_its_box(store, db_path, monkeypatch):
    at = app(db_path, monkeypatch, "launch")
    at.text_area(key="eval-checkpoints").set_value("/some/checkpoint")
    at.number_input(key="eval-n").set_value(0)
    at.button(key="eval-launch").click().run()
    assert error_after(at, "eval-n") == "Samples per problem: at least 1"  # its title, and the field's ge=1
    assert len(at.error) == 1


def test_a_bad_rl_field_is_reported_under_its_box(store, db_path, monkeypatch, tmp_path):
    at = app(db_path, monkeypatch, "launch")
    at.text_input(key="rl-base-path").set_value("/some/base")
    at.text_input(key="rl-output_dir").set_value(str(tmp_path / "out"))
    at.number_input(key="rl-per_device_train_batch_size").set_value(6)
    next(b for b in at.button if b.label == "Launch RL job").click().run()
    # GRPO's rule: 6 completions per step on one process are not whole groups of num_generations (8)
    assert error_after(at, "rl-per_device_train_batch_size") == (
        "per_device_train_batch_size x 1 training process(es) = 6 completions per step, not a multiple of "
        "num_generations (8): GRPO needs whole groups"
    )
    assert len(at.error) == 1 and store.count(Job) == 0


def test_a_missing_endpoint_is_reported_under_it_and_a_valid_launch_shows_no_error(
    store, db_path, monkeypatch, tmp_path
):
    from backend.jobs import runner
    from backend.lab.tiny import make_tiny_checkpoint

    monkeypatch.setattr(runner, "start", lambda store, job_id, detach=True: 0)  # the job row is what this test checks
    low, high = make_tiny_checkpoint(tmp_path / "low", seed=1), make_tiny_checkpoint(tmp_path / "high", seed=2)
    at = app(db_path, monkeypatch, "launch")
    at.text_input(key="low-path").set_value(str(low))
    at.text_input(key="sweep-alphas").set_value("0, 0.5, 1")
    at.button(key="sweep-launch").click().run()
    assert error_after(at, "high-path") == "choose both endpoints, θ_low and θ_high"
    at.text_input(key="high-path").set_value(str(high))
    at.button(key="sweep-launch").click().run()
    assert not at.error, [e.value for e in at.error]
    (job,) = store.select(Job)
    assert any(job.id in s.value for s in at.success)


def test_a_picked_checkpoint_closes_the_path_box_and_is_what_launches(store, db_path, monkeypatch, tmp_path):
    from backend.jobs import runner
    from backend.lab.tiny import make_tiny_checkpoint
    from backend.records import Experiment

    monkeypatch.setattr(runner, "start", lambda store, job_id, detach=True: 0)  # the job row is what this test checks
    picked, high = make_tiny_checkpoint(tmp_path / "low", seed=1), make_tiny_checkpoint(tmp_path / "high", seed=2)
    typed = make_tiny_checkpoint(tmp_path / "typed", seed=3)  # a real folder: a launch from it would succeed too
    store.put([Checkpoint(id="ck-low", path=str(picked), kind="trained", label="low run")])
    at = app(db_path, monkeypatch, "launch")
    assert not at.text_input(key="low-path").disabled  # nothing picked: type a path
    at.text_input(key="low-path").set_value(str(typed)).run()
    at.selectbox(key="low-pick").set_value(str(picked)).run()
    assert at.text_input(key="low-path").disabled  # the typed path no longer counts, and says so
    at.text_input(key="high-path").set_value(str(high))
    at.text_input(key="sweep-alphas").set_value("0, 1")
    at.button(key="sweep-launch").click().run()
    assert not at.error, [e.value for e in at.error]
    (job,) = store.select(Job)
    assert store.get(Experiment, job.experiment_id).spec["low"] == str(picked)


def test_an_unreadable_folder_is_reported_under_its_field(store, db_path, monkeypatch, tmp_path):
    """The runner's folder check (backend/jobs/runner.py) names the field whose folder it could not read."""
    from backend.lab.tiny import make_tiny_checkpoint

    low = make_tiny_checkpoint(tmp_path / "low", seed=1)
    (tmp_path / "empty").mkdir()  # a folder with no weights in it
    at = app(db_path, monkeypatch, "launch")
    at.text_input(key="low-path").set_value(str(low))
    at.text_input(key="high-path").set_value(str(tmp_path / "empty"))
    at.text_input(key="sweep-alphas").set_value("0, 1")
    at.button(key="sweep-launch").click().run()
    message = error_after(at, "high-path")
    assert message and str(tmp_path / "empty") in message, [e.value for e in at.error]
    assert len(at.error) == 1 and store.count(Job) == 0


def test_the_form_says_how_many_samples_a_launch_runs_and_groups_gpu_options_apart(populated, db_path, monkeypatch):
    """The fixture's benchmark `t` holds 6 problems, 3 of them hard; 8 samples per problem by default."""
    from backend.sweep.spec import SweepSpec

    at = app(db_path, monkeypatch, "launch")
    at.text_input(key="sweep-alphas").set_value("0, 0.5, 1").run()
    at.selectbox(key="sweep-bench-builtin").set_value("t").run()
    n = SweepSpec.model_fields["n"].default
    preview = next(i.value for i in at.info if i.value.startswith("This launch samples"))
    assert preview == (f"This launch samples 3 checkpoints × 6 problems × {n} samples per problem = "
                       f"**{3 * 6 * n:,} samples**, each judged in the sandbox.")  # fmt: skip
    at.selectbox(key="sweep-difficulty").set_value("hard").run()
    at.number_input(key="sweep-limit").set_value(2).run()
    preview = next(i.value for i in at.info if i.value.startswith("This launch samples"))
    assert f"× 2 problems × {n} samples" in preview
    headings = [m.value for m in at.markdown if m.value.startswith("**")]
    assert headings[:3] == [
        "**Sampling**",
        "**Where it runs: engine, executor, GPUs**",
        "**Judging: sandbox and limits**",
    ]


def test_sampling_defaults_to_the_recipe_the_endpoints_were_measured_with(store, db_path, monkeypatch):
    """Endpoints a stored sweep sampled (the lab's, in `make run`): its T, tokens and n, not the spec's 1.0 and 1024."""
    from backend.records import Experiment

    recipe = {"low": "/x/low", "high": "/x/high", "alphas": [0, 1], "n": 16, "temperature": 0.4, "max_tokens": 384}
    store.put([Experiment(id="lab-sweep", kind="sweep", name="lab", spec=recipe)])
    at = app(db_path, monkeypatch, "launch")
    assert at.number_input(key="sweep-temperature").value == 1.0  # no endpoints yet: the spec's default
    at.text_input(key="low-path").set_value("/x/low").run()
    shown = {name: at.number_input(key=f"sweep@lab-sweep-{name}").value for name in ("n", "temperature", "max_tokens")}
    assert shown == {"n": 16, "temperature": 0.4, "max_tokens": 384}
