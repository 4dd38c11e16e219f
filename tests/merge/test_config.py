"""MergeConfig, the `merge` command's one config, becomes one Merge per output folder: the weights
each form gives are written out by hand here, and α is held once, on the Merge."""

from pathlib import Path

import pytest

from backend.errors import UserError
from backend.merge.spec import Merge, MergeConfig
from backend.specs import cli_flag, validate_spec


def test_the_alpha_form_gives_one_merge_per_alpha_each_in_its_folder():
    config = MergeConfig(output_dir=Path("out"), low="L", high="H", alphas="-0.5,1.5")
    merges, outs = config.merges()
    assert [(m.models, m.weights, m.method, m.alpha) for m in merges] == [
        (["L", "H"], [1.5, -0.5], "linear", -0.5),  # (1 − α, α)
        (["L", "H"], [-0.5, 1.5], "linear", 1.5),
    ]
    assert outs == [Path("out/alpha_-0.5"), Path("out/alpha_1.5")]
    one, (out,) = MergeConfig(output_dir=Path("out"), low="L", high="H", alphas=[0.25]).merges()
    assert out == Path("out") and one[0].weights == [0.75, 0.25]
    # task arithmetic in the α form: base θ_low (weight 0), λ = α
    (ta,), _ = MergeConfig(output_dir=Path("o"), low="L", high="H", alphas=[2.0], method="task_arithmetic").merges()
    assert (ta.weights, ta.alpha) == ([0.0, 2.0], 2.0)


def test_the_model_form_gives_one_merge_without_an_alpha():
    config = MergeConfig(output_dir=Path("o"), models=["a:0.25", "dir:with:colons:0.75"], dtype="bfloat16")
    (m,), outs = config.merges(local=lambda ref: f"/local/{ref}")
    assert (m.models, m.weights, m.method, m.dtype, m.alpha) == (
        ["/local/a", "/local/dir:with:colons"],
        [0.25, 0.75],
        "linear",
        "bfloat16",
        None,
    )
    assert outs == [Path("o")]
    (tv,), _ = MergeConfig(output_dir=Path("o"), models=["x:0.5", "y:1.5"], base="B").merges()
    assert (tv.models, tv.weights, tv.method, tv.alpha) == (["B", "x", "y"], [0.0, 0.5, 1.5], "task_arithmetic", None)


def test_a_config_that_names_no_form_or_a_half_form_is_refused_in_one_line():
    with pytest.raises(UserError, match="the α form needs --low DIR --high DIR and at least one --alphas"):
        validate_spec(MergeConfig, {"output_dir": "o", "low": "L", "alphas": [0.5]}, cli_flag)
    with pytest.raises(UserError, match="say what to merge"):
        validate_spec(MergeConfig, {"output_dir": "o"}, cli_flag)
    assert Merge.at_alpha("L", "H", 0.5).to_dict()["alpha"] == 0.5
