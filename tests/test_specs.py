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
    singular or plural: --problem is JudgeSpec.problem and ProblemSelection.problems)."""
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
