"""rl --report-to: TRL's report_to from the spec to the trainer's config (none by default), one line
when the tracker is not installed, the same field on the form and the command line."""

import pytest

from backend.errors import FieldError
from backend.rl.spec import RLSpec
from backend.rl.trainer import grpo_config
from tests.conftest import run_cli


def config(tmp_path, **kw):
    spec = RLSpec(base="b", output_dir=str(tmp_path / "out"), **kw)
    return grpo_config(spec, {}, {}, use_cpu=True, progress=False, dtype="float32")


def test_the_tracker_reaches_trls_config_and_none_is_the_default(tmp_path):
    assert RLSpec(base="b", output_dir="o").report_to == "none"
    assert config(tmp_path).report_to == []  # TRL's "none": no tracker
    # on a Ray worker the tracker is the worker's business: the spec does not look for it here
    assert config(tmp_path, report_to="wandb", executor="ray").report_to == ["wandb"]


def test_a_tracker_that_is_not_installed_is_one_line_naming_its_package(tmp_path):
    with pytest.raises(FieldError, match=r"report_to mlflow needs the mlflow package here \(pip install mlflow\)"):
        RLSpec(base="b", output_dir="o", report_to="mlflow")
    done = run_cli("rl", "--base", str(tmp_path), "--out", str(tmp_path / "o"), "--report-to", "trackio")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: report_to trackio needs the trackio package here (pip install trackio); or leave report_to at none"
    ]
