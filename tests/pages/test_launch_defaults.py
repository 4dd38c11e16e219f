"""The sweep form fits what the user started from (issue #27, finding 2): the benchmark and
problems the endpoints were measured on, a stored spec pre-filling every field, and a name."""

import json

import pytest

from backend.records import Experiment, Job, Problem
from backend.specs import extra, unwrap
from backend.sweep.spec import SweepSpec
from tests.conftest import ROOT
from tests.pages.test_apptest import app
from tests.test_store_concurrency import hold_a_read

LAB = ROOT / "artifacts" / "lab"
pytestmark = pytest.mark.skipif(not (LAB / "recipe.json").is_file(), reason="no committed lab artifacts")
PAGE_FIELDS = ("low", "high", "alphas", "bench", "problems", "name")  # laid out by the page itself


@pytest.fixture
def lab_db(lab_copy, store):
    """The committed lab, plus one builtin problem, so the benchmark is a real choice between two sets."""
    lab_copy(store.path)
    store.put([Problem(id="builtin/a-plus-b", bench="builtin", title="A + B", statement="Add two numbers.")])
    return store


def lab_sweep(store) -> Experiment:
    (sweep,) = [e for e in store.select(Experiment, {"kind": "sweep"}) if e.id != "sweep-smoke"]
    return sweep


def as_launched(stored: dict) -> dict:
    """A stored spec as a new launch writes it: the lab's spec predates the sandbox field's one
    name (`judge_backend` is now `backend`, read by SweepSpec under either)."""
    return {("backend" if k == "judge_backend" else k): v for k, v in stored.items()}


def held_in() -> list[str]:
    return json.loads((LAB / "recipe.json").read_text())["held_in"]


def lab_recipe_sweep() -> dict:
    """The committed lab's sweep settings (temperature, n, α grid), as its recipe.json records them."""
    from backend.lab.recipe import LabRecipe

    return LabRecipe.from_dict(json.loads((LAB / "recipe.json").read_text())["recipe"]).sweep


def alpha_grid() -> str:
    return ", ".join(f"{a:g}" for a in lab_recipe_sweep()["alphas"])


@pytest.mark.slow
def test_benchmark_and_problems_default_to_what_the_endpoints_were_measured_on(lab_db, db_path, monkeypatch):
    at = app(db_path, monkeypatch, "launch")
    assert at.selectbox(key="sweep-bench-builtin").value == "builtin"  # no endpoints yet: the spec's default
    assert at.selectbox(key="sweep-bench-builtin").options == ["builtin (1 problem)", "lab (40 problems)"]
    at.selectbox(key="low-pick").set_value(str(LAB / "checkpoints" / "low")).run()
    at.selectbox(key="high-pick").set_value(str(LAB / "checkpoints" / "high")).run()
    assert not at.exception, at.exception
    assert at.selectbox(key="sweep-bench-lab").value == "lab"  # the lab's own set, with its recorded limits
    picker = at.multiselect(key=f"sweep-problems-lab-{lab_sweep(lab_db).id}")
    assert picker.value == lab_sweep(lab_db).spec["problems"]  # the problems the sweep measured, held-out ones too
    assert set(held_in()) < set(picker.value) and len(picker.value) == 40
    assert any(lab_sweep(lab_db).name in c.value for c in at.caption)


@pytest.mark.slow
def test_start_from_a_stored_spec_prefills_every_field_and_the_name_is_stored(lab_db, db_path, monkeypatch):
    from backend.jobs import runner

    monkeypatch.setattr(runner, "start", lambda store, job_id, detach=True: 0)
    stored = lab_sweep(lab_db)
    at = app(db_path, monkeypatch, "launch")
    at.selectbox(key="sweep-start").set_value(stored.id).run()
    assert not at.exception, at.exception
    spec, prefix = stored.spec, f"{stored.id}/"
    assert at.selectbox(key=f"{prefix}low-pick").value == spec["low"]
    assert at.selectbox(key=f"{prefix}high-pick").value == spec["high"]
    assert (
        at.text_input(key=f"{prefix}sweep-alphas").value
        == alpha_grid()
        == "-0.5, -0.25, 0, 0.25, 0.5, 0.75, 1, 1.25, 1.5"
    )
    assert at.selectbox(key=f"{prefix}sweep-bench-lab").value == "lab"
    assert at.multiselect(key=f"{prefix}sweep-problems-lab-").value == spec["problems"]
    form_fields = [n for n, f in SweepSpec.model_fields.items() if extra(f).get("form", True) and n not in PAGE_FIELDS]
    shown = {}
    for name in form_fields:
        (box,) = [w for w in at.main if getattr(w, "key", None) == f"{prefix}sweep-{name}"]
        shown[name] = box.value
    expected = {n: SweepSpec.model_fields[n].get_default() for n in form_fields} | {
        n: spec[n] for n in form_fields if n in spec
    }
    text = {n for n in form_fields if unwrap(SweepSpec.model_fields[n].annotation)[0] is str}
    expected = {
        n: 0
        if v is None and n in ("gpus", "time_limit_s", "memory_limit_mb", "limit")
        else ""
        if v is None and n in text
        else v
        for n, v in expected.items()
    }  # fmt: skip  (an optional number shows None as 0, an optional text as an empty box)
    assert shown == expected
    recipe = lab_recipe_sweep()  # the lab's recipe, not 1.0 / 1024
    assert (
        (shown["temperature"], shown["max_tokens"], shown["n"]) == (recipe["temperature"], 384, 16) != (1.0, 1024, 16)
    )
    assert at.text_input(key=f"{prefix}sweep-name").value == ""  # a new experiment gets its own name

    at.text_input(key=f"{prefix}sweep-name").set_value("lab recipe, second seed").run()
    at.number_input(key=f"{prefix}sweep-seed").set_value(1).run()
    at.button(key="sweep-launch").click().run()
    assert not at.error, [e.value for e in at.error]
    (job,) = lab_db.select(Job)
    launched = lab_db.get(Experiment, job.experiment_id)
    assert launched.name == "lab recipe, second seed" and launched.spec["name"] == "lab recipe, second seed"
    # everything else as stored, the recipe included (the name and seed were changed above)
    same = {k: v for k, v in as_launched(spec).items() if k not in ("seed", "name")}
    assert {k: launched.spec[k] for k in same} == same
    assert launched.spec["seed"] == 1 and launched.spec["independent"] == [str(LAB / "checkpoints" / "sft")]


@pytest.mark.slow
def test_a_launch_while_another_session_reads_waits_for_the_read(lab_db, db_path, monkeypatch):
    """The server's threads share one DuckDB instance per file, which refuses a read-write
    connection while a read-only one is open; the launch must wait for the read, not fail."""
    import threading

    from backend.jobs import runner

    create_job = runner.create_job

    def create_during_the_read(store, spec):
        threading.Timer(0.5, release.set).start()  # the read (held below) ends half a second into the write
        return create_job(store, spec)

    monkeypatch.setattr(runner, "create_job", create_during_the_read)
    monkeypatch.setattr(runner, "start", lambda store, job_id, detach=True: 0)
    at = app(db_path, monkeypatch, "launch")
    at.selectbox(key="sweep-start").set_value(lab_sweep(lab_db).id).run()
    at.text_input(key=f"{lab_sweep(lab_db).id}/sweep-name").set_value("while a page reads").run()
    reader, release = hold_a_read(lab_db)  # another session's page, or the warm-up
    at.button(key="sweep-launch").click().run()
    release.set()
    reader.join(10)
    assert not at.error, [e.value for e in at.error]
    (job,) = lab_db.select(Job)
    assert lab_db.get(Experiment, job.experiment_id).name == "while a page reads"


@pytest.mark.browser
def test_start_from_the_lab_sweep_in_chromium(lab_server, page, store):
    """In Chromium: start from the lab's sweep, see its recipe in the fields, name it, launch; the
    stored job's experiment carries the name and the lab's spec."""
    import re

    from backend.jobs import runner
    from backend.records import Checkpoint

    stored = lab_sweep(store).spec
    low = next(c for c in store.select(Checkpoint) if c.path == stored["low"])
    page.goto(f"{lab_server}/launch")
    start = page.get_by_role("combobox", name="Start from experiment").first
    start.wait_for(timeout=180000)  # the server warms the lab's views up at start
    start.click()
    page.get_by_role("option", name=re.compile("miniature lab")).click()

    def value(role: str, name: str, wanted: str) -> str:
        box = page.get_by_role(role, name=name).first
        for _ in range(150):  # the rerun redraws the fields with the stored spec's values
            if box.input_value() == wanted:
                break
            page.wait_for_timeout(200)
        return box.input_value()

    temperature = f"{lab_recipe_sweep()['temperature']:.2f}"
    assert value("spinbutton", "Temperature", temperature) == temperature != "1.00"  # the lab's recipe
    assert value("spinbutton", "Max tokens", "384") == "384"
    assert value("spinbutton", "Samples per problem", "16") == "16"
    assert value("combobox", "Benchmark", "lab (40 problems)") == "lab (40 problems)"
    assert value("textbox", "α grid", alpha_grid()) == alpha_grid()
    assert value("combobox", "θ_low (α = 0)", f"{low.label} (trained)") == f"{low.label} (trained)"
    name = page.get_by_role("textbox", name="Experiment name").first
    name.fill("lab recipe again")
    name.press("Tab")
    page.wait_for_timeout(1000)
    page.get_by_role("button", name="Launch sweep").click()
    outcome = page.get_by_text("started (experiment").or_(page.locator("[data-testid='stAlertContentError']"))
    outcome.first.wait_for(timeout=60000)
    # a read in flight (the warm-up's, another session's) once made this launch fail at once
    assert "started (experiment" in outcome.first.inner_text(), outcome.first.inner_text()
    (job,) = store.select(Job)
    runner.cancel(store, job.id)  # the row is what this test checks; the lab's sweep would run for an hour
    launched = store.get(Experiment, job.experiment_id)
    assert launched.name == "lab recipe again" == launched.spec["name"]
    stored = {k: v for k, v in as_launched(stored).items() if k != "name"}  # the name was typed above
    assert {k: launched.spec[k] for k in stored} == stored


def started_from(at, kind: str, experiment_id: str) -> str:
    at.selectbox(key=f"{kind}-start").set_value(experiment_id).run()
    assert not at.exception, at.exception
    return f"{experiment_id}/"


@pytest.mark.slow
def test_the_eval_form_starts_from_a_stored_eval_and_follows_its_checkpoints(lab_db, db_path, monkeypatch):
    from backend.jobs import runner
    from backend.sweep.spec import EvalSpec, validate_spec

    monkeypatch.setattr(runner, "start", lambda store, job_id, detach=True: 0)
    ends = [str(LAB / "checkpoints" / name) for name in ("low", "high")]
    at = app(db_path, monkeypatch, "launch")
    at.text_area(key="eval-checkpoints").set_value("\n".join(ends)).run()
    assert at.selectbox(key="eval-bench-lab").value == "lab"  # where these checkpoints were measured
    assert at.multiselect(key=f"eval-problems-lab-{lab_sweep(lab_db).id}").value == lab_sweep(lab_db).spec["problems"]

    spec = validate_spec(EvalSpec, {"checkpoints": ends, "bench": "lab", "problems": held_in()[:3], "n": 4,
                                    "temperature": 0.5, "max_tokens": 200, "ray_address": "auto", "name": "first eval",
                                    "prompt_format": "chat"})  # as a launch stores it: resolved from auto  # fmt: skip
    lab_db.put([Experiment(id="eval-stored", kind="eval", name="first eval", spec=json.loads(spec.model_dump_json()))])
    at = app(db_path, monkeypatch, "launch")
    prefix = started_from(at, "eval", "eval-stored")
    assert at.text_area(key=f"{prefix}eval-checkpoints").value == "\n".join(ends)
    assert at.selectbox(key=f"{prefix}eval-bench-lab").value == "lab"
    assert at.multiselect(key=f"{prefix}eval-problems-lab-").value == held_in()[:3]
    shown = {n: at.number_input(key=f"{prefix}eval-{n}").value for n in ("n", "temperature", "max_tokens")}
    assert shown == {"n": 4, "temperature": 0.5, "max_tokens": 200}
    assert any("Ray address: auto" in c.value for c in at.caption)  # no widget: shown, and launched as stored
    at.text_input(key=f"{prefix}eval-name").set_value("second eval").run()
    at.button(key="eval-launch").click().run()
    assert not at.error, [e.value for e in at.error]
    (job,) = lab_db.select(Job)
    launched = lab_db.get(Experiment, job.experiment_id).spec
    assert launched == {**json.loads(spec.model_dump_json()), "name": "second eval"}


@pytest.mark.slow
def test_the_rl_form_starts_from_the_labs_rl_run_under_todays_field_names(lab_db, db_path, monkeypatch, tmp_path):
    from backend.jobs import runner

    monkeypatch.setattr(runner, "start", lambda store, job_id, detach=True: 0)
    lab_run = next(e for e in lab_db.select(Experiment, {"kind": "rl"}) if e.spec["reward"] == "R_3")
    # the lab's run as an older version stored it: before the renames and the fields added since
    old_names = {"gpus": "num_gpus", "backend": "judge_backend"}
    added = {"prompt_format", "save_dtype", "vllm_mode", "precision", "gradient_checkpointing", "sharding", "lora_rank",
             "gpu_busy", "keep_checkpoints", "report_to"}  # fmt: skip
    old = {old_names.get(k, k): v for k, v in lab_run.spec.items() if k not in added | {"save_float32"}}
    assert set(old) - set(lab_run.spec) == {"num_gpus", "judge_backend"}
    stored = Experiment(id="rl-stored-before-renames", kind="rl", name=lab_run.name, spec=old)
    lab_db.put([stored])
    at = app(db_path, monkeypatch, "launch")
    prefix = started_from(at, "rl", stored.id)
    spec = stored.spec
    assert at.selectbox(key=f"{prefix}rl-base-pick").value == spec["base"]
    assert at.selectbox(key=f"{prefix}rl-reward").value == "R_3"
    for name in ("steps", "learning_rate", "num_generations", "max_completion_length", "seed"):
        assert at.number_input(key=f"{prefix}rl-{name}").value == spec[name], name
    assert at.number_input(key=f"{prefix}rl-gpus").value == spec["num_gpus"]  # under its name of today
    at.text_input(key=f"{prefix}rl-output_dir").set_value(str(tmp_path / "again"))
    next(b for b in at.button if b.label == "Launch RL job").click().run()
    assert not at.error, [e.value for e in at.error]
    (job,) = lab_db.select(Job)
    launched = lab_db.get(Experiment, job.experiment_id).spec
    renamed = {("gpus" if k == "num_gpus" else "backend" if k == "judge_backend" else k): v for k, v in spec.items()}
    assert {k: launched[k] for k in renamed} == {**renamed, "output_dir": str(tmp_path / "again")}  # all it stored
    assert set(launched) - set(renamed) == added  # fields added since


@pytest.mark.slow
def test_a_smoke_sweep_of_the_labs_endpoints_does_not_become_the_forms_recipe(lab_db, db_path, monkeypatch):
    """The lab's sweep drew 16 samples of 40 problems per checkpoint; a newer two-sample sweep of one
    problem on the same endpoints is not what the form starts from: the most thorough measurement is."""
    smoke = dict(lab_sweep(lab_db).spec, n=2, max_tokens=16, limit=1, problems=[])
    lab_db.put([Experiment(id="sweep-smoke", kind="sweep", name="smoke", spec=smoke)])
    at = app(db_path, monkeypatch, "launch")
    at.selectbox(key="low-pick").set_value(str(LAB / "checkpoints" / "low")).run()
    at.selectbox(key="high-pick").set_value(str(LAB / "checkpoints" / "high")).run()
    assert not at.exception, at.exception
    key = f"sweep@{lab_sweep(lab_db).id}"
    shown = {name: at.number_input(key=f"{key}-{name}").value for name in ("n", "max_tokens")}
    assert shown == {"n": 16, "max_tokens": 384}  # the lab's documented recipe, not the smoke sweep's 2 and 16
