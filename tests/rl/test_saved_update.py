"""RL checkpoints keep what RL learned: float32 by default; a bf16 save measures what rounding kept.
References are torch's own casts of the same tensors."""

import json

import pytest
import torch
from safetensors.torch import load_file, save_file

from backend.records import Checkpoint, Metric
from backend.rl.spec import RLSpec
from backend.rl.task import SURVIVAL, register_checkpoint

STEP = 1e-5  # an RL update per weight: lr 1e-6 for ~10 steps of Adam


def bf16_base_and_update(tmp_path):
    """A bf16 base checkpoint and a float32 'checkpoint-10' that moved every weight by 1e-5."""
    from transformers import AutoModelForCausalLM

    from backend.lab.tiny import make_tiny_checkpoint

    base = make_tiny_checkpoint(tmp_path / "base")
    AutoModelForCausalLM.from_pretrained(base).to(torch.bfloat16).save_pretrained(base)
    trained = tmp_path / "out" / "checkpoint-10"
    trained.mkdir(parents=True)
    before = load_file(base / "model.safetensors")
    after = {k: t.float() + STEP for k, t in before.items()}
    save_file(after, str(trained / "model.safetensors"), metadata={"format": "pt"})
    config = json.loads((base / "config.json").read_text()) | {"dtype": "float32"}
    (trained / "config.json").write_text(json.dumps(config))
    return base, trained, before, after


def test_a_default_save_keeps_an_update_of_1e_5_per_weight_exactly(store, tmp_path):
    base, trained, _, after = bf16_base_and_update(tmp_path)
    spec = RLSpec(base=str(base), output_dir=str(tmp_path / "out"))
    register_checkpoint(store, trained, spec, "rl-x", 10)
    saved = load_file(trained / "model.safetensors")
    assert all(saved[k].dtype == torch.float32 and torch.equal(saved[k], after[k]) for k in after)
    assert not (trained / SURVIVAL).exists() and store.select(Metric, {"experiment_id": "rl-x"}) == []
    assert store.select(Checkpoint, {"experiment_id": "rl-x"})[0].step == 10


def test_a_bf16_save_reports_the_share_of_the_update_it_lost(store, tmp_path, capsys):
    base, trained, before, after = bf16_base_and_update(tmp_path)
    spec = RLSpec(base=str(base), output_dir=str(tmp_path / "out"), save_dtype="base")
    register_checkpoint(store, trained, spec, "rl-x", 10)
    saved = load_file(trained / "model.safetensors")
    assert {t.dtype for t in saved.values()} == {torch.bfloat16}
    # the reference: torch's own rounding of each float32 weight, against the bf16 base
    moved = sum(int((after[k] != before[k].float()).sum()) for k in after)
    kept = sum(int((after[k].to(torch.bfloat16) != before[k]).sum()) for k in after)
    update = sum(float(((after[k].double() - before[k].double()) ** 2).sum()) for k in after)
    left = sum(float(((saved[k].double() - before[k].double()) ** 2).sum()) for k in after)
    metrics = {m.name: m.value for m in store.select(Metric, {"experiment_id": "rl-x"}) if m.step == 10}
    assert metrics["saved_update_kept_share"] == pytest.approx(kept / moved, abs=1e-12)
    assert metrics["saved_update_norm_ratio"] == pytest.approx((left / update) ** 0.5, rel=1e-9)
    assert metrics["saved_update_kept_share"] < 0.5  # most of a 1e-5 update rounds back to the base
    assert json.loads((trained / SURVIVAL).read_text())["update_kept_share"] == metrics["saved_update_kept_share"]
    said = [line for line in capsys.readouterr().out.splitlines() if "kept their update" in line]
    assert len(said) == 1 and f"only {kept / moved:.1%} of the weights the run moved" in said[0]
    assert "--save-dtype float32 keeps all of it" in said[0]


def test_a_spec_stored_with_save_float32_keeps_what_it_asked():
    """Specs stored before save_dtype: save_float32 off (its old default) saved in the base's dtype."""
    assert RLSpec(base="b", output_dir="o").save_dtype == "float32"
    assert RLSpec(base="b", output_dir="o", save_float32=False).save_dtype == "base"
    assert RLSpec(base="b", output_dir="o", save_float32=True).save_dtype == "float32"
