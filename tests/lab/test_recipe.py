"""LabRecipe holds RLSpec and SweepSpec values, checked by those specs, and reads recipes written
before it did."""

import re
from dataclasses import replace

import pytest

from backend.errors import UserError
from backend.lab.recipe import LabRecipe
from tests.conftest import run_cli


def test_the_recipe_builds_its_jobs_specs_from_its_values():
    recipe = LabRecipe()
    rl = recipe.rl_spec("R_3", base="sft", output_dir="out", problems=["lab/a"])
    assert (rl.steps, rl.save_steps, rl.learning_rate, rl.per_device_train_batch_size, rl.temperature) == (
        40,
        40,
        1e-4,
        16,
        0.5,
    )
    assert (rl.reward, rl.seed, rl.beta, rl.problems) == ("R_3", 0, 0.0, ["lab/a"])
    sweep = LabRecipe.smoke().sweep_spec(low="a", high="b")
    assert (sweep.alphas, sweep.n, sweep.max_tokens, sweep.temperature, sweep.live_switch) == (
        [-0.5, 0.0, 0.5, 1.0, 1.5],
        4,
        160,
        0.4,
        True,
    )


def test_a_value_out_of_its_specs_bounds_is_refused_with_the_fields_name():
    with pytest.raises(UserError, match="n: at most 1024"):
        LabRecipe(sweep=dict(LabRecipe().sweep, n=5000))
    with pytest.raises(UserError, match="multiple of num_generations"):
        LabRecipe(rl=dict(LabRecipe().rl, per_device_train_batch_size=12))


def test_a_recipe_written_with_flat_fields_reads_as_the_same_recipe():
    flat = {k: v for k, v in LabRecipe().to_dict().items() if k not in ("rl", "sweep")}
    flat |= {"rl_steps": 2, "rl_learning_rate": 1e-4, "num_generations": 4, "rl_batch_size": 8,
             "max_completion_length": 160, "rl_temperature": 0.5, "alphas": [-0.5, 0, 0.5, 1, 1.5], "n": 4,
             "temperature": 0.4, "max_tokens": 160}  # fmt: skip
    flat |= {"only": LabRecipe.smoke().only, "held_out_per_difficulty": 0, "hidden_size": 64, "num_layers": 2,
             "vocab_size": 1024, "sft_epochs": 2, "code_sequences": 400, "time_limit_s": None,
             "limit_runs": 2, "title_copy_rows": 40, "swapped_title_rows": 40}  # fmt: skip
    assert LabRecipe.from_dict(flat) == LabRecipe.smoke()


def test_the_pilot_is_the_third_design_with_short_rl_and_an_endpoints_only_sweep():
    pilot, full = LabRecipe.pilot(), LabRecipe()
    differs = {k for k, v in pilot.to_dict().items() if v != full.to_dict()[k]}
    assert differs == {"rl", "sweep"}
    assert pilot.rl == full.rl | {"steps": 20} and pilot.rl_spec("R_3", base="-", output_dir="-").save_steps == 20
    assert pilot.sweep == full.sweep | {"alphas": [0, 1], "n": 8}
    assert not pilot.is_smoke


def test_smoke_and_pilot_together_are_refused_in_one_line():
    result = run_cli("lab", "build", "--smoke", "--pilot")
    assert result.returncode == 2 and result.stderr.strip() == (
        "error: --smoke and --pilot pick different recipes; give one of them"
    )


def test_a_recipe_written_before_title_rows_reads_as_having_none():
    older = {k: v for k, v in LabRecipe().to_dict().items() if k not in ("title_copy_rows", "swapped_title_rows")}
    assert LabRecipe.from_dict(older) == replace(LabRecipe(), title_copy_rows=0, swapped_title_rows=0)
    assert LabRecipe.from_dict(LabRecipe().to_dict()) == LabRecipe()
    build_e = {k: v for k, v in LabRecipe().to_dict().items() if k != "swapped_title_overlap"}
    assert LabRecipe.from_dict(build_e).swapped_title_overlap == 0.0  # drawn uniformly, as it was built


def test_a_recipe_written_with_restate_title_reads_as_its_restatement_then():
    """Builds A-C stored `restate_title` and titles of 2-4 words; reading them back gives the
    restatement they were trained with, not today's default."""
    today = {k: v for k, v in LabRecipe().to_dict().items() if k not in ("restatement", "title_copy_words")}
    old = LabRecipe.from_dict(today | {"restate_title": True})
    assert (old.restatement, old.title_copy_words) == ("Problem: {title}.\n", 4)
    older = today | {"restate_title": False, "title_copy_rows": 0, "swapped_title_rows": 0}
    assert LabRecipe.from_dict(older).restatement == ""


@pytest.mark.parametrize(
    "values, message",
    [({"restatement": "Problem: the title\n"}, "has no {title}; put it where the title goes"),
     ({"restatement": ""}, "title rows teach the restatement, and the recipe has none; set title_copy_rows and "
                            "swapped_title_rows to 0"),
     ({"swapped_title_overlap": 1.5}, "swapped_title_overlap is a share of the swapped-title rows; "
                                      "give 0 to 1, not 1.5")],
)  # fmt: skip
def test_a_restatement_that_cannot_hold_the_title_is_refused_in_one_line(values, message):
    with pytest.raises(UserError, match=re.escape(message)):
        replace(LabRecipe(), **values)
