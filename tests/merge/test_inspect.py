"""`merge inspect`: how two endpoints differ, against torch arithmetic on the same tensors; two bf16
copies one ulp apart are called rounding."""

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from backend.merge.diff import inspect, ordered_bits, verdict
from tests.conftest import run_cli

LAB = Path(__file__).resolve().parents[2] / "artifacts" / "lab" / "checkpoints"


def test_ordered_bits_put_adjacent_floats_one_apart():
    for dtype in (torch.bfloat16, torch.float16, torch.float32):
        x = torch.tensor([-1.5, -0.0, 0.0, 1e-3, 2.0], dtype=dtype)
        up = torch.nextafter(x.float(), torch.full_like(x.float(), float("inf"))) if dtype == torch.float32 else None
        if up is not None:
            assert ((ordered_bits(up) - ordered_bits(x)) == 1).all()
        assert ordered_bits(torch.tensor([-0.0], dtype=dtype)).item() == 0 == ordered_bits(x[2:3]).item()
        assert (ordered_bits(x[:-1]) <= ordered_bits(x[1:])).all()  # the floats' order


def one_ulp_copy(tmp_path):
    """A bf16 checkpoint and a copy whose every other weight is the next bf16 number."""
    from transformers import AutoModelForCausalLM

    from backend.lab.tiny import make_tiny_checkpoint

    low = make_tiny_checkpoint(tmp_path / "low")
    AutoModelForCausalLM.from_pretrained(low).to(torch.bfloat16).save_pretrained(low)
    high = tmp_path / "high"
    high.mkdir()
    for f in low.iterdir():
        if f.name != "model.safetensors":
            (high / f.name).write_bytes(f.read_bytes())
    tensors = load_file(low / "model.safetensors")
    moved = {}
    for k, t in tensors.items():
        bits = t.flatten().view(torch.int16).clone()
        bits[::2] += 1  # sign-magnitude: one step away from zero on either side, adjacent either way
        moved[k] = bits.view(torch.bfloat16).reshape(t.shape)
    save_file(moved, str(high / "model.safetensors"), metadata={"format": "pt"})
    return low, high, tensors, moved


def test_two_bf16_copies_one_ulp_apart_are_called_rounding(tmp_path):
    low, high, a, b = one_ulp_copy(tmp_path)
    figures = inspect(low, high)
    total = sum(t.numel() for t in a.values())
    differ = sum(int((a[k] != b[k]).sum()) for k in a)  # +0 nudged is the smallest subnormal: differs too
    assert figures["weights"] == total and figures["share_differ"] == differ / total
    assert figures["share_one_ulp"] == figures["share_differ"] and figures["one_ulp_of_differing"] == 1.0
    lo = torch.cat([a[k].double().flatten() for k in a])
    hi = torch.cat([b[k].double().flatten() for k in a])
    assert figures["relative_norm"] == pytest.approx(float((hi - lo).norm() / lo.norm()), rel=1e-9)
    assert figures["cosine"] == pytest.approx(float(lo @ hi / (lo.norm() * hi.norm())), rel=1e-12)
    assert "100% of the differing weights are one ulp apart in BF16" in verdict(figures)
    assert "α scales quantisation noise" in verdict(figures)


def test_the_labs_endpoints_differ_by_more_than_rounding():
    figures = inspect(LAB / "low", LAB / "high")
    a, b = load_file(LAB / "low" / "model.safetensors"), load_file(LAB / "high" / "model.safetensors")
    assert figures["share_differ"] == sum(int((a[k] != b[k]).sum()) for k in a) / sum(t.numel() for t in a.values())
    assert figures["one_ulp_of_differing"] < 0.5 and "a difference to sweep" in verdict(figures)


@pytest.mark.slow
def test_merge_inspect_prints_the_figures_and_the_verdict(tmp_path):
    out = run_cli("merge", "inspect", "--low", str(LAB / "low"), "--high", str(LAB / "high"))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert [line.split("  ")[0] for line in lines[:5]] == [
        "weights compared", "share that differ", "share one ulp apart", "relative norm", "cosine"]  # fmt: skip
    assert "a difference to sweep" in lines[-1]
    low, high, _, _ = one_ulp_copy(tmp_path)
    out = run_cli("merge", "inspect", "--low", str(low), "--high", str(high), "--json")
    assert "one ulp apart in BF16" in json.loads(out.stdout)["verdict"]
    averaged = run_cli("merge", "--low", str(low), "--high", str(high), "--alphas", "0.5", "--out", str(tmp_path / "m"))
    assert averaged.returncode == 0, averaged.stderr  # `merge ...` without a sub-command still averages
