import json
import os
import warnings

import pytest
import torch
from safetensors.torch import load_file, save_file
from transformers import AutoModelForCausalLM

from backend.errors import UserError
from backend.merge.cache import MergeCache, register_merged
from backend.merge.engine import merge, sweep
from backend.merge.live import LiveAlphaSwitch
from backend.merge.spec import Merge, from_mergekit_yaml, to_mergekit_yaml
from backend.records import Checkpoint as CheckpointRow
from tests.conftest import run_cli
from tests.merge.conftest import make_checkpoint

ALPHAS = [-1.0, -0.5, 0.0, 0.25, 1.0, 1.5, 2.0]


def tensors(folder) -> dict[str, torch.Tensor]:
    out = {}
    for f in sorted(folder.glob("*.safetensors")):
        out.update(load_file(f))
    return out


def reference(low: dict, high: dict, alpha: float) -> dict:
    """torch's own float32 arithmetic, cast back: torch.add(w_low·θ_low, θ_high, alpha=w_high);
    a term whose weight is 0 contributes nothing (so α = 0 and α = 1 give the endpoints)."""
    out = {}
    for name, a in low.items():
        b, w_lo = high[name], 1 - alpha
        if alpha == 0:
            acc = a.float() * w_lo
        elif w_lo == 0:
            acc = b.float() * alpha
        else:
            acc = torch.add(a.float() * w_lo, b.float(), alpha=alpha)
        out[name] = acc.to(a.dtype)
    return out


@pytest.mark.parametrize("arch", ["qwen2", "llama"])
@pytest.mark.parametrize("sharded", [False, True], ids=["single", "sharded"])
def test_exact_values_against_torch(pair, tmp_path, arch, sharded):
    low, high = pair(arch, sharded)
    lo, hi = tensors(low), tensors(high)
    if sharded:
        assert (low / "model.safetensors.index.json").exists()
    for alpha in ALPHAS:
        out = merge(Merge.at_alpha(low, high, alpha), tmp_path / f"a{alpha}", progress=False, shard_bytes=30_000).out
        got, want = tensors(out), reference(lo, hi, alpha)
        assert got.keys() == want.keys()
        for name in want:
            assert got[name].dtype == want[name].dtype
            assert torch.equal(got[name], want[name]), (alpha, name)
        if alpha == 0.0:
            assert all(torch.equal(got[n], lo[n]) for n in lo)  # bit-exact endpoint
        if alpha == 1.0:
            assert all(torch.equal(got[n], hi[n]) for n in hi)


def test_output_is_sharded_with_index_provenance_and_loadable(pair, tmp_path):
    low, high = pair()
    out = merge(Merge.at_alpha(low, high, 1.5), tmp_path / "out", progress=False, shard_bytes=30_000).out
    index = json.loads((out / "model.safetensors.index.json").read_text())
    assert len(set(index["weight_map"].values())) > 1
    record = json.loads((out / "merge.json").read_text())
    assert len(record["inputs"][0]["hash"]) == 64
    # the merge's record holds α once, beside the weights it gives
    assert record["spec"] == {
        "models": [str(low), str(high)],
        "weights": [-0.5, 1.5],
        "method": "linear",
        "dtype": "auto",
        "allow_nonfinite": False,
        "alpha": 1.5,
    }
    from safetensors import safe_open

    with safe_open(next(out.glob("model-00001-*.safetensors")), "pt") as f:
        meta = json.loads(f.metadata()["frontier_lab_merge"])
    assert meta["input_hashes"] == [i["hash"] for i in record["inputs"]]
    model = AutoModelForCausalLM.from_pretrained(out)
    tokens = model.generate(torch.tensor([[1, 2, 3]]), max_new_tokens=4, do_sample=False)
    assert tokens.shape == (1, 7)
    assert (out / "generation_config.json").exists() and (out / "config.json").exists()


def test_one_pass_sweep_equals_single_merges(pair, tmp_path):
    low, high = pair(sharded=True)
    alphas = [-0.5, 0.5, 1.5]
    swept = sweep([Merge.at_alpha(low, high, a) for a in alphas], [tmp_path / f"s{a}" for a in alphas], progress=False)
    for a, result in zip(alphas, swept, strict=True):
        single = merge(Merge.at_alpha(low, high, a), tmp_path / f"m{a}", progress=False).out
        got, want = tensors(result.out), tensors(single)
        assert all(torch.equal(got[n], want[n]) for n in want)


def test_weights_not_summing_to_one_warn_but_merge(pair, tmp_path):
    low, high = pair()
    with pytest.warns(UserWarning, match="sum to 1.5"):
        spec = Merge([str(low), str(high)], [1.0, 0.5])
    assert merge(spec, tmp_path / "o", progress=False).out.exists()


def test_float32_dtype_override(pair, tmp_path):
    low, high = pair()
    out = merge(Merge.at_alpha(low, high, 0.5, dtype="float32"), tmp_path / "o", progress=False).out
    assert {t.dtype for t in tensors(out).values()} == {torch.float32}
    source, merged = (json.loads((f / "config.json").read_text()) for f in (low, out))
    assert source["dtype"] != "float32" and merged["dtype"] == "float32"  # the config now says what the weights are


def test_tied_embeddings(pair, tmp_path):
    low, high = pair(tie=True)
    assert "lm_head.weight" not in tensors(low)
    out = merge(Merge.at_alpha(low, high, 2.0), tmp_path / "o", progress=False).out
    model = AutoModelForCausalLM.from_pretrained(out)
    assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()


def _no_output(tmp_path, name):
    return not (tmp_path / name).exists() and not list(tmp_path.glob(f".{name}.partial-*"))


def test_error_shape_mismatch(tmp_path):
    low = make_checkpoint(tmp_path / "low", seed=1)
    wide = make_checkpoint(tmp_path / "wide", seed=3, intermediate_size=48)
    with pytest.raises(UserError, match=r"tensor model\.layers\.0\.mlp\.\w+_proj\.weight: shape \[\d+, \d+\]") as info:
        merge(Merge.at_alpha(low, wide, 0.5), tmp_path / "out", progress=False)
    assert "\n" not in str(info.value) and _no_output(tmp_path, "out")


def test_error_missing_tensor(pair, tmp_path):
    low, high = pair()
    state = load_file(high / "model.safetensors")
    del state["model.layers.1.self_attn.q_proj.weight"]
    save_file(state, high / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(UserError, match=r"high is missing tensor model\.layers\.1\.self_attn\.q_proj\.weight"):
        merge(Merge.at_alpha(low, high, 0.5), tmp_path / "out", progress=False)
    assert _no_output(tmp_path, "out")


def test_error_architecture_mismatch(tmp_path):
    q = make_checkpoint(tmp_path / "q", "qwen2", 1)
    ll = make_checkpoint(tmp_path / "l", "llama", 2)
    with pytest.raises(UserError, match=r"architecture mismatch: .* is 'qwen2', .* is 'llama'"):
        merge(Merge.at_alpha(q, ll, 0.5), tmp_path / "out", progress=False)
    assert _no_output(tmp_path, "out")


def test_error_truncated_file(pair, tmp_path):
    low, high = pair()
    f = high / "model.safetensors"
    with open(f, "r+b") as fh:
        fh.truncate(os.path.getsize(f) - 1000)
    with pytest.raises(UserError, match="truncated"):
        merge(Merge.at_alpha(low, high, 0.5), tmp_path / "out", progress=False)
    assert _no_output(tmp_path, "out")


def test_error_overflow_names_the_tensor_and_leaves_nothing(pair, tmp_path):
    low, high = pair(dtype=torch.float16)
    with pytest.raises(UserError, match=r"makes tensor .+ non-finite .*--allow-nonfinite"):
        merge(Merge.at_alpha(low, high, 1e5), tmp_path / "out", progress=False)
    assert _no_output(tmp_path, "out")
    kept = merge(Merge.at_alpha(low, high, 1e5, allow_nonfinite=True), tmp_path / "kept", progress=False)
    assert kept.nonfinite and json.loads((kept.out / "merge.json").read_text())["nonfinite_tensors"] == kept.nonfinite


def _write_folder(folder, tensors_, model_type="toy"):
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": model_type}))
    save_file(tensors_, folder / "model.safetensors")
    return folder


def test_non_float_tensors_copied_if_identical_else_error(tmp_path):
    ids = torch.arange(6, dtype=torch.int64)
    a = _write_folder(tmp_path / "a", {"w": torch.ones(3), "ids": ids})
    b = _write_folder(tmp_path / "b", {"w": torch.zeros(3), "ids": ids.clone()})
    out = tensors(merge(Merge.at_alpha(a, b, 0.5), tmp_path / "o", progress=False).out)
    assert torch.equal(out["ids"], ids) and torch.equal(out["w"], torch.full((3,), 0.5))
    c = _write_folder(tmp_path / "c", {"w": torch.zeros(3), "ids": ids + 1})
    with pytest.raises(UserError, match="non-float tensor ids differs"):
        merge(Merge.at_alpha(a, c, 0.5), tmp_path / "o2", progress=False)


def test_large_tensor_is_processed_in_chunks(tmp_path):
    big = torch.randn(1000, 37)
    a = _write_folder(tmp_path / "a", {"w": big.to(torch.bfloat16)})
    b = _write_folder(tmp_path / "b", {"w": (-big).to(torch.bfloat16)})
    out = tensors(merge(Merge.at_alpha(a, b, 1.25), tmp_path / "o", chunk_elems=999, progress=False).out)
    want = reference({"w": big.to(torch.bfloat16)}, {"w": (-big).to(torch.bfloat16)}, 1.25)
    assert torch.equal(out["w"], want["w"])


def test_mergekit_round_trip(pair):
    low, high = pair()
    spec = Merge.at_alpha(low, high, -0.5, dtype="bfloat16")
    text = to_mergekit_yaml(spec)
    assert "merge_method: linear" in text and "normalize: false" in text and "dtype: float32" in text
    back = from_mergekit_yaml(text)
    assert (back.models, back.weights, back.dtype) == (spec.models, spec.weights, "bfloat16")
    with pytest.raises(UserError, match="normalize: false"):
        from_mergekit_yaml(text.replace("normalize: false", "normalize: true"))


def test_live_switch_matches_loading_from_disk(pair, tmp_path):
    low, high = pair()
    model = AutoModelForCausalLM.from_pretrained(low)
    switch = LiveAlphaSwitch(model, low, high)
    ids = torch.tensor([[5, 6, 7, 8]])
    for alpha in (-0.5, 0.5, 1.5):
        switch.set_alpha(alpha)
        disk = AutoModelForCausalLM.from_pretrained(
            merge(Merge.at_alpha(low, high, alpha), tmp_path / f"d{alpha}", progress=False).out
        )
        # the switch uses the merge engine's own float32 arithmetic: the weights are bit for bit equal
        live_weights, disk_weights = model.state_dict(), disk.state_dict()
        assert all(torch.equal(live_weights[n], disk_weights[n]) for n in disk_weights), alpha
        with torch.no_grad():
            live_logits, disk_logits = model(ids).logits.float(), disk(ids).logits.float()
        assert torch.equal(live_logits, disk_logits)
        assert not torch.allclose(live_logits, AutoModelForCausalLM.from_pretrained(low)(ids).logits.float(), atol=0.1)
    low_w = AutoModelForCausalLM.from_pretrained(low).state_dict()
    switch.set_alpha(0.0)  # the endpoint itself, exactly
    assert all(torch.equal(model.state_dict()[n], low_w[n]) for n in low_w)


def test_cache_reuses_and_evicts_lru(pair, tmp_path, db_path):
    low, high = pair()
    cache = MergeCache(tmp_path / "cache", budget_bytes=10**9)
    specs = [Merge.at_alpha(low, high, a) for a in (0.5, 1.5)]
    first = cache.get(specs, progress=False)
    stamp = [(p / "model.safetensors").stat().st_mtime_ns for p in first]
    again = cache.get(specs, progress=False)
    assert again == first and [(p / "model.safetensors").stat().st_mtime_ns for p in again] == stamp
    one = max(s for _, s, _ in cache.entries())
    (first[1] / ".last_used").touch()  # α=1.5 is now more recently used than α=0.5
    small = MergeCache(tmp_path / "cache", budget_bytes=int(one * 2.5))
    third = small.get([Merge.at_alpha(low, high, 2.0)], progress=False)
    left = {d.name for _, _, d in small.entries()}
    assert left == {first[1].name, third[0].name}  # the least recently used (α=0.5) went

    from backend.store import Store

    store = Store(db_path)
    row = register_merged(store, third[0], Merge.at_alpha(low, high, 2.0))
    back = store.get(CheckpointRow, row.id)
    assert (back.kind, back.alpha, back.label) == ("merged", 2.0, "α=2")
    assert store.get(CheckpointRow, back.low_id).path == str(low)


@pytest.mark.slow
def test_cli_sweep_writes_alpha_folders_and_registers(pair, tmp_path, db_path):
    low, high = pair()
    out = tmp_path / "sweep"
    # 1 and 1.000000001 are two α: two folders, two rows (a six-digit name would put both in alpha_1)
    res = run_cli("merge", "--low", str(low), "--high", str(high), "--alpha", "-0.5", "--alphas", "1,1.000000001",
                  "--out", str(out), "--register", "--db", str(db_path))  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in out.iterdir()) == ["alpha_-0.5", "alpha_1", "alpha_1.000000001"]
    assert json.loads((out / "alpha_1.000000001" / "merge.json").read_text())["spec"]["alpha"] == 1.000000001
    from backend.store import Store

    rows = Store(db_path).select(CheckpointRow, {"kind": "merged"})
    assert sorted((c.alpha, c.label) for c in rows) == [(-0.5, "α=-0.5"), (1.0, "α=1"), (1.000000001, "α=1.000000001")]


@pytest.mark.slow
def test_cli_general_form_and_errors(pair, tmp_path):
    low, high = pair()
    res = run_cli("merge", "--model", f"{low}:0.25", "--model", f"{high}:0.75", "--out", str(tmp_path / "g"),
                  "--export-mergekit", str(tmp_path / "m.yml"))  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert from_mergekit_yaml(tmp_path / "m.yml").weights == [0.25, 0.75]
    bad = run_cli("merge", "--model", f"{low}", "--out", str(tmp_path / "x"))
    assert bad.returncode == 2 and "DIR:WEIGHT" in bad.stderr and bad.stderr.count("\n") == 1
    exists = run_cli("merge", "--low", str(low), "--high", str(high), "--alpha", "1", "--out", str(tmp_path / "g"))
    assert exists.returncode == 2 and "exists and is not empty" in exists.stderr
    # an α a float cannot tell apart from 1: refused in one line, nothing written
    same = run_cli("merge", "--low", str(low), "--high", str(high), "--alphas", "1,1.00000000000000001",
                   "--out", str(tmp_path / "same"))  # fmt: skip
    assert same.returncode == 2 and same.stderr.count("\n") == 1, same.stderr
    assert "α 1.00000000000000001 cannot be told apart from α 1" in same.stderr
    assert not (tmp_path / "same").exists()


def test_no_warning_for_alpha_form(pair):
    low, high = pair()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Merge.at_alpha(low, high, 2.5)
