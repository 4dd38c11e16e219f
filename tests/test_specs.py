"""One declaration per option: a field added to a spec appears, with its default, bounds and help,
as a CLI option and as a form widget, with no other edit; and defaults stated elsewhere come from the specs."""

import re
import sys

import typer
from pydantic import Field
from streamlit.testing.v1 import AppTest
from typer.testing import CliRunner

from backend.cli.options import spec_command
from backend.rl.spec import RLSpec
from backend.sweep.spec import EvalSpec, SweepSpec
from tests.conftest import ROOT


class WithWarmup(EvalSpec):
    warmup_steps: int = Field(3, ge=1, le=9, title="Warm-up steps")
    """Steps of warm-up before sampling, to check that a new option reaches every surface."""


def cli_of(model):
    app, seen = typer.Typer(), {}

    @app.command()
    @spec_command(model, skip=("kind", "stop"))
    def run(spec) -> None:
        seen["spec"] = spec

    return app, seen


def test_a_new_field_is_a_cli_option_with_its_default_bounds_and_help():
    app, seen = cli_of(WithWarmup)
    runner = CliRunner()
    shown = re.sub(r"[\s│]+", " ", runner.invoke(app, ["--help"], env={"COLUMNS": "300"}).output)
    assert "--warmup-steps" in shown
    assert "Steps of warm-up before sampling" in shown and "[≥ 1, ≤ 9]" in shown and "[default: 3]" in shown
    assert runner.invoke(app, ["--checkpoint", "x", "--warmup-steps", "5"]).exit_code == 0
    assert seen["spec"].warmup_steps == 5 and seen["spec"].checkpoints == ["x"]
    runner.invoke(app, ["--checkpoint", "x"])
    assert seen["spec"].warmup_steps == 3  # the field's default
    refused = runner.invoke(app, ["--checkpoint", "x", "--warmup-steps", "0"])
    assert refused.exit_code != 0 and "--warmup-steps: at least 1" in str(refused.exception)


def form_script():
    import streamlit as st
    from pydantic import Field

    from backend.sweep.spec import EvalSpec
    from dashboard.form import spec_widgets

    class WithWarmup(EvalSpec):
        warmup_steps: int = Field(3, ge=1, le=9, title="Warm-up steps")
        """Steps of warm-up before sampling, to check that a new option reaches every surface."""

    st.session_state["values"] = spec_widgets(WithWarmup, "t", skip=("checkpoints",))


def test_a_new_field_is_a_form_widget_with_its_default_bounds_and_help(monkeypatch):
    # AppTest.from_function leaves its script as __main__, which later spawn()ed processes would
    # re-run: restore the real __main__ afterwards
    monkeypatch.setitem(sys.modules, "__main__", sys.modules["__main__"])
    at = AppTest.from_function(form_script).run()
    assert not at.exception, at.exception
    (box,) = [w for w in at.number_input if w.label == "Warm-up steps"]
    assert box.value == 3
    assert "Steps of warm-up before sampling" in box.help and "[≥ 1, ≤ 9]" in box.help
    assert at.session_state["values"]["warmup_steps"] == 3


def test_help_shows_each_spec_default():
    runner = CliRunner()
    for model in (SweepSpec, EvalSpec, RLSpec):
        app, _ = cli_of(model)
        shown = re.sub(r"[\s│]+", " ", runner.invoke(app, ["--help"], env={"COLUMNS": "400"}).output)
        for name in ("seed", "bench"):
            assert f"[default: {model.model_fields[name].default}]" in shown, (model.__name__, name)


def test_the_docs_options_table_is_rendered_from_the_specs():
    """docs/cli.md's table of job options and defaults between its markers is exactly what the specs render."""
    from backend.cli.options import job_commands
    from backend.specs import options_table

    page = (ROOT / "docs" / "cli.md").read_text()
    table = page.split("<!-- options:start -->\n", 1)[1].split("\n<!-- options:end -->", 1)[0]
    assert table == options_table(job_commands()), "regenerate with: python -m backend options-table"


WHY = "no spec can hold this"


def hand_written_options(path) -> list[tuple[int, str]]:
    """Lines declaring a Typer option or argument without a "no spec can hold this" comment on
    that line or the two above it (the spec mechanism's own line says it is the mechanism)."""
    lines = path.read_text().splitlines()
    return [(i + 1, line.strip()) for i, line in enumerate(lines)
            if ("typer.Option(" in line or "typer.Argument(" in line)
            and not any(WHY in lines[j] for j in range(max(0, i - 2), i + 1))
            and "the mechanism" not in line]  # fmt: skip


def test_every_hand_written_option_says_why_no_spec_holds_it(tmp_path):
    found = {p.name: hand_written_options(p) for p in sorted((ROOT / "backend" / "cli").glob("*.py"))}
    assert {name: rows for name, rows in found.items() if rows} == {}
    # the rule can fail: an option without the comment is found, one with it is not
    (tmp_path / "x.py").write_text(
        'a = typer.Option("--a")\n# no spec can hold this: printing\nb = typer.Option("--b")\n'
    )
    assert hand_written_options(tmp_path / "x.py") == [(1, 'a = typer.Option("--a")')]


def test_every_spec_commands_help_shows_its_fields_flags_and_defaults():
    """--help and docs/cli.md's table come from the same fields: each command in the table shows
    every field's flag (and its aliases) and default in its --help."""
    from backend.cli import _register_stages, app
    from backend.cli.options import job_commands
    from backend.specs import cli_flag, extra

    _register_stages()
    for command, models in job_commands().items():
        shown = re.sub(
            r"[\s│]+", " ", CliRunner().invoke(app, [*command.split(), "--help"], env={"COLUMNS": "400"}).output
        )
        for model, skip in models:
            for name, field in model.model_fields.items():
                if name in skip or extra(field).get("cli", True) is False:
                    continue
                flags = ",".join((cli_flag(name, field), *extra(field).get("aliases", ())))
                assert f" {flags} " in shown, (command, name)
                default = field.get_default(call_default_factory=True)
                if default not in (None, [], (), False) and not field.is_required():
                    assert f"[default: {default}]" in shown, (command, name, default)


def test_analyze_help_is_the_specs_fields_with_their_defaults():
    from backend.analysis.spec import AnalysisSpec
    from backend.cli import _register_stages, app
    from backend.specs import cli_flag

    _register_stages()
    shown = re.sub(r"[\s│]+", " ", CliRunner().invoke(app, ["analyze", "--help"], env={"COLUMNS": "400"}).output)
    for name, field in AnalysisSpec.model_fields.items():
        assert f" {cli_flag(name, field)} " in shown, name
    assert "[default: 0.5]" in shown and "[> 0, ≤ 1]" in shown  # --threshold: SOLVED_AT and its bounds
    assert "[default: per_problem]" in shown


def test_one_concept_has_one_field_name_flag_and_form_label_across_commands():
    """A field name means one flag and one form label in every spec; a flag names one field (its
    singular or plural: --problem is JudgeSpec.problem and the jobs' problems)."""
    from collections import defaultdict

    from backend.cli.options import job_commands
    from backend.specs import cli_flag, extra, form_label

    by_name, by_flag = defaultdict(set), defaultdict(set)
    for models in job_commands().values():
        for model, skip in models:
            for name, field in model.model_fields.items():
                if name not in skip and extra(field).get("cli", True) is not False:
                    by_name[name].add((cli_flag(name, field), form_label(name, field)))
                    by_flag[cli_flag(name, field)].add(name.removesuffix("s"))
    assert {name: shown for name, shown in by_name.items() if len(shown) > 1} == {}
    assert {flag: names for flag, names in by_flag.items() if len(names) > 1} == {}
    assert by_name["backend"] == {("--backend", "Sandbox")} and by_flag["--out"] == {"output_dir"}


def declarations(models) -> dict[str, list[set[str]]]:
    """{field name: the configs grouped by how they declare it} for every field declared by more
    than one config in more than one way: type, default, bounds, flag, form label and help."""
    from collections import defaultdict

    by_name: dict = defaultdict(lambda: defaultdict(set))
    for model in models:
        for name, field in model.model_fields.items():
            default = "required" if field.is_required() else repr(field.get_default(call_default_factory=True))
            shape = (
                repr(field.annotation),
                default,
                repr(field.metadata),
                field.title,
                field.description,
                repr(field.json_schema_extra),
            )
            by_name[name][shape].add(model.__name__)
    return {name: sorted(shapes.values(), key=sorted) for name, shapes in by_name.items() if len(shapes) > 1}


# Options that mean something else in one command, each declared in that command's config on purpose
DIFFER = {
    # samples import: where a LiveCodeBench file's samples came from (optional, a label too); rollout: what it samples
    "checkpoint": [{"RolloutSpec"}, {"SampleImportSpec"}],
    "bench": [
        {"CalibrateSpec"},
        {"EvalSpec", "RLSpec", "RolloutSpec", "SweepSpec"},
        {"ProblemQuery"},
    ],  # calibrate: builtin or ccplus only; list: every bench
    "setting": [
        {"AnalysisSpec"},
        {"EvalSpec", "RolloutSpec", "SampleImportSpec", "SweepSpec"},
    ],  # analyze: a filter, none = all
    "temperature": [{"EvalSpec", "SamplingSpec", "SweepSpec"}, {"RLSpec"}],  # RL: the policy's generation, > 0
    "seed": [{"EvalSpec", "SamplingSpec", "SweepSpec"}, {"RLSpec"}],  # RL: the training seed
    "gpus": [{"EvalSpec", "SweepSpec"}, {"RLSpec"}],  # RL: GPUs of one training run, 0 = CPUs
    "kind": [{"EvalSpec"}, {"RLSpec"}, {"SampleImportSpec"}, {"SweepSpec"}],  # each job's own tag
    "low": [{"MergeConfig"}, {"SweepSpec"}],  # merge: optional, one of three forms
    "high": [{"MergeConfig"}, {"SweepSpec"}],
    "alphas": [{"MergeConfig"}, {"SweepSpec"}],  # merge: no default grid, --alpha repeatable
    "base": [{"MergeConfig"}, {"RLSpec"}],  # merge: the task vectors' base, optional
    "output_dir": [{"MergeConfig"}, {"RLSpec"}],  # merge: a Path, alpha_<α>/ folders under it
    # analyze: a window over stored problems (a day, checked; undated problems left out and counted);
    # the LCB import: which rows of the files to import
    "since": [{"AnalysisSpec"}, {"LCBFilter"}],
    "until": [{"AnalysisSpec"}, {"LCBFilter"}],
}


def test_an_option_that_several_commands_take_is_declared_alike_in_each_config():
    """Each command's config declares all its options itself (a reader opens one file); an option
    that several commands share is declared word for word alike, except where it means something
    else in one command (DIFFER, each with its reason)."""
    from backend.cli.options import job_commands

    models = {model for pairs in job_commands().values() for model, _ in pairs}
    assert declarations(models) == DIFFER
    # the check can fail: a config whose twin of a shared option drifted is found
    from backend.rollout.spec import SamplingSpec

    class Drifted(SamplingSpec):
        top_p: float = Field(0.95, gt=0.0, le=1.0, title="top-p")
        """Nucleus sampling mass."""

    assert declarations([SamplingSpec, Drifted])["top_p"] == [{"Drifted"}, {"SamplingSpec"}]


def test_the_sweep_configs_every_option_is_declared_in_its_one_file():
    """`sweep`'s and `eval`'s options are all declared in backend/sweep/spec.py: no base class
    from another module adds fields."""
    import inspect

    for model in (SweepSpec, EvalSpec):
        homes = {
            inspect.getsourcefile(cls)
            for cls in model.__mro__
            if getattr(cls, "__annotations__", None) and set(cls.__annotations__) & set(model.model_fields)
        }
        assert homes == {str(ROOT / "backend" / "sweep" / "spec.py")}, model.__name__


def test_a_spec_stored_by_the_earlier_layered_configs_loads_with_every_value():
    """tests/fixtures/stored_specs.json holds a sweep, an eval and an RL spec as experiments stored
    them before the configs were flat (model_dump_json of the mixin-built specs): each loads as the
    job runner loads it, with every value as stored, and pre-fills the Launch form unchanged."""
    import json

    from backend.jobs.runner import SPECS
    from backend.specs import under_current_names
    from backend.sweep.spec import stored_spec, validate_spec

    stored = json.loads((ROOT / "tests" / "fixtures" / "stored_specs.json").read_text())
    assert set(stored) == {"sweep", "eval", "rl"}
    # an RL run stored before --keep-checkpoints resumes keeping every checkpoint, as it was started
    # a sweep stored before --merge-dtype and --keep-merges merges as it did (the endpoints' dtype) and
    # keeps what the budget allows, as its merges' own evictions did
    added = {
        "rl": {"keep_checkpoints": 0, "report_to": "none"},
        "sweep": {"merge_dtype": "auto", "keep_merges": "budget"},
    }
    # sweeps and evals stored before engine openai existed load with its options' defaults (unused by their engine)
    server = {"server_url": None, "serve": None, "api_key_env": None, "concurrency": 8, "request_timeout_s": 600.0,
              "server_start_timeout_s": 900.0, "extra_body": None}  # fmt: skip
    added |= {"sweep": added["sweep"] | server, "eval": server}
    for kind, data in stored.items():
        spec = validate_spec(SPECS[kind], stored_spec(kind, data))
        assert json.loads(spec.model_dump_json()) == data | added.get(kind, {}), kind
        assert under_current_names(SPECS[kind], data) == data, kind
    assert stored["sweep"]["alphas"] == [0.0, 0.5, 1.0] and stored["sweep"]["ray_address"] == "auto"
    # the older names stored specs may hold still load as today's fields
    old_sweep = {k: v for k, v in stored["sweep"].items() if k not in ("backend", "live_switch")}
    old_sweep |= {"judge_backend": "none", "keep_merged": True}
    spec = validate_spec(SweepSpec, stored_spec("sweep", old_sweep))
    assert (spec.backend, spec.live_switch) == ("none", False)
    old_rl = {k: v for k, v in stored["rl"].items() if k not in ("gpus", "save_dtype")}
    spec = validate_spec(RLSpec, {**old_rl, "num_gpus": 0, "save_float32": False})
    assert (spec.gpus, spec.save_dtype) == (0, "base")


def test_analyze_takes_every_sample_filter_and_passes_it_on_as_the_one_filter_type():
    """SampleFilter is the one analysis filter type: `analyze` declares a flag for each of its
    fields and hands them over unchanged (a filter added to SampleFilter alone fails here)."""
    from dataclasses import asdict

    from backend.analysis.spec import AnalysisSpec
    from backend.store_queries import SampleFilter

    given = {"difficulty": "hard", "platform": "atcoder", "setting": "tool", "since": "2024-01-01",
             "until": "2024-06-30", "opt_min_tier": 3}  # fmt: skip
    spec = AnalysisSpec(experiment="e", **given)
    assert asdict(spec.sample_filter()) == given
    assert spec.sample_filter() == SampleFilter("hard", "atcoder", "tool", "2024-01-01", "2024-06-30", 3)
    # a LiveCodeBench version names its window's days (LiveCodeBench's README: May 2023 to January 2025)
    assert asdict(AnalysisSpec(experiment="e", window="release_v5").sample_filter())["since"] == "2023-05-01"
    assert asdict(AnalysisSpec(experiment="e", window="release_v5").sample_filter())["until"] == "2025-01-31"
