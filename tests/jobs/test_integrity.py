"""A job never changes rows that belong to other experiments, and endpoints are compared by content."""

import os
import shutil

import pytest

from backend.errors import UserError
from backend.jobs import runner
from backend.lab.artifacts import ARTIFACTS
from backend.records import Checkpoint, Job
from backend.store import Store
from backend.sweep.spec import SweepSpec, validate_spec


def test_the_same_checkpoint_spelled_differently_is_refused(endpoints, tmp_path):
    low, high = endpoints
    for other in (low + "/", low + "/./", os.path.relpath(low)):
        with pytest.raises(UserError, match="θ_low and θ_high are the same checkpoint"):
            validate_spec(SweepSpec, {"low": low, "high": other, "alphas": "0,1"})
    copy = tmp_path / "copy-of-low"
    shutil.copytree(low, copy)
    with pytest.raises(UserError, match="same checkpoint \\(identical content\\)"):
        validate_spec(SweepSpec, {"low": low, "high": str(copy), "alphas": "0,1"})
    with pytest.raises(UserError, match="choose both endpoints"):
        validate_spec(SweepSpec, {"low": "", "high": "", "alphas": "0,1"})
    assert validate_spec(SweepSpec, {"low": low, "high": high, "alphas": "0,1"}).high == high


def _rows(store: Store) -> dict[str, dict]:
    return {c.id: c.__dict__.copy() for c in store.select(Checkpoint)}


@pytest.mark.slow
@pytest.mark.parametrize("keep_merged", [True, False], ids=["merged folders", "live switch"])
def test_a_sweep_over_the_labs_endpoints_leaves_the_labs_rows_byte_identical(
    tmp_path, monkeypatch, keep_merged, lab_copy
):
    monkeypatch.setenv("FLAB_CACHE", str(tmp_path / "cache"))
    store = Store(lab_copy(tmp_path / "lab.duckdb"))  # the committed lab, imported
    before = _rows(store)
    low, high = str(ARTIFACTS / "checkpoints" / "low"), str(ARTIFACTS / "checkpoints" / "high")
    lab_merged = {c.alpha for c in before.values() if c["kind"] == "merged" for c in [Checkpoint(**c)]}
    assert {-0.5, 0.5, 1.5} <= lab_merged  # the sweep below reuses the lab's ids for these α
    spec = validate_spec(SweepSpec, {"low": low, "high": high, "alphas": "-0.5,0.5,1.5",
                                     "problems": ["lab/max-subarray"],
                                     "bench": "lab", "n": 1, "max_tokens": 8, "live_switch": not keep_merged,
                                     "engine": "transformers"})  # fmt: skip
    job = runner.create_job(store, spec)
    runner.run_job_here(store, job.id)
    assert store.get(Job, job.id).status == "done", store.get(Job, job.id).error
    after = _rows(store)
    assert {k: after[k] for k in before} == before  # not one field of the lab's rows changed


def test_identical_endpoints_only_when_asked_for(endpoints):
    low, _ = endpoints
    spec = validate_spec(SweepSpec, {"low": low, "high": low + "/", "alphas": "0,1", "allow_same_endpoints": True})
    assert spec.allow_same_endpoints
