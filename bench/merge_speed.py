"""Merge speed and memory on a ~0.5B-parameter bf16 Qwen2 pair (random weights, sharded at 400 MB).

Measures, in one run, each as its own process (peak RSS from wait4):
  - our single merge at α = 1.5, and our one-pass 9-α sweep;
  - 9 separate single merges (the sweep's baseline);
  - a naive load-everything-then-average torch script;
  - the copy floor: reading both inputs and writing one output (resp. nine) with cat.

    .venv/bin/python bench/merge_speed.py [--workdir /tmp/flab-merge-bench] [--layers 24]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ALPHAS = [-1.0, -0.5, -0.25, 0.25, 0.5, 0.75, 1.25, 1.5, 2.0]
NAIVE = """
import sys, torch, json, shutil
from pathlib import Path
from safetensors.torch import load_file, save_file
low, high, out, a = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), float(sys.argv[4])
lo, hi = {}, {}
for f in sorted(low.glob('*.safetensors')): lo.update(load_file(f))
for f in sorted(high.glob('*.safetensors')): hi.update(load_file(f))
merged = {k: ((1 - a) * v.float() + a * hi[k].float()).to(v.dtype) for k, v in lo.items()}
out.mkdir(parents=True); save_file(merged, out / 'model.safetensors'); shutil.copy(low / 'config.json', out)
"""


def build_checkpoint(folder: Path, layers: int, seed: int, shard_bytes: int = 400 << 20) -> int:
    """Runs in a child process: the parent must stay small, or every child it forks inherits
    its resident set in ru_maxrss."""
    import torch
    from safetensors.torch import save_file
    from transformers import AutoModelForCausalLM, Qwen2Config

    config = Qwen2Config(
        vocab_size=151936,
        hidden_size=896,
        intermediate_size=4864,
        num_hidden_layers=layers,
        num_attention_heads=14,
        num_key_value_heads=2,
        tie_word_embeddings=True,
        torch_dtype="bfloat16",
    )
    with torch.device("meta"):
        shapes = {k: v.shape for k, v in AutoModelForCausalLM.from_config(config).state_dict().items()}
    folder.mkdir(parents=True)
    gen = torch.Generator().manual_seed(seed)
    shards, current, size = [], {}, 0
    for name, shape in shapes.items():
        t = (torch.randn(shape, generator=gen) * 0.02).to(torch.bfloat16)
        if current and size + t.numel() * 2 > shard_bytes:
            shards.append(current)
            current, size = {}, 0
        current[name] = t
        size += t.numel() * 2
    shards.append(current)
    weight_map = {}
    for i, shard in enumerate(shards):
        fname = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        save_file(shard, folder / fname, metadata={"format": "pt"})
        weight_map.update(dict.fromkeys(shard, fname))
    (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    config.save_pretrained(folder)
    return sum(s.numel() for s in shapes.values())


def timed(argv: list[str], shell: bool = False) -> tuple[float, float, float | None]:
    """(wall seconds, peak RSS in MB, engine seconds as our CLI reports them) of one child process."""
    os.sync()  # earlier steps' dirty pages must not be written back on this step's clock
    start = time.perf_counter()
    proc = subprocess.Popen(argv, shell=shell, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise SystemExit(f"failed: {argv}")
    os.sync()  # "writing the outputs" means on disk: every step's clock includes its own flush
    engine = re.search(r"merge\(s\) in ([\d.]+)s", out)
    return time.perf_counter() - start, usage.ru_maxrss / 1024, float(engine.group(1)) if engine else None


SWITCH = """
import sys, time, torch
from transformers import AutoModelForCausalLM
sys.path.insert(0, sys.argv[4])
from backend.merge.live import LiveAlphaSwitch
low, high, merged = sys.argv[1:4]
model = AutoModelForCausalLM.from_pretrained(low, dtype=torch.bfloat16)
switch = LiveAlphaSwitch(model, low, high)
t = time.perf_counter()
for a in (-1.0, -0.5, 0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0):
    switch.set_alpha(a)
per_switch = (time.perf_counter() - t) / 9
t = time.perf_counter()
loaded = AutoModelForCausalLM.from_pretrained(merged, dtype=torch.bfloat16)
for p in loaded.parameters():  # weights may be mapped lazily: touch each once, as a switch writes each
    p.data.view(-1)[:: 4096 // p.element_size()].sum()  # one element per 4 KB page
print(per_switch, time.perf_counter() - t)
"""


def switch_vs_load(low: Path, high: Path, merged: Path) -> tuple[float, float]:
    """Seconds per α switch inside a loaded transformers model, and seconds to load the merged
    folder from disk instead, every weight touched (page cache warm: both read nothing cold)."""
    root = str(Path(__file__).resolve().parent.parent)
    out = subprocess.run(
        [sys.executable, "-c", SWITCH, str(low), str(high), str(merged), root],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return float(out[-2]), float(out[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workdir", default="/tmp/flab-merge-bench")
    parser.add_argument("--layers", type=int, default=24)
    parser.add_argument("--build", nargs=2, metavar=("FOLDER", "SEED"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build:
        print(build_checkpoint(Path(args.build[0]), args.layers, int(args.build[1])))
        return
    work = Path(args.workdir)
    shutil.rmtree(work, ignore_errors=True)
    low, high = work / "low", work / "high"
    build = [sys.executable, __file__, "--layers", str(args.layers), "--build"]
    params = int(subprocess.run([*build, str(low), "1"], check=True, capture_output=True, text=True).stdout)
    subprocess.run([*build, str(high), "2"], check=True, capture_output=True)
    size_gb = sum(f.stat().st_size for f in low.glob("*.safetensors")) / 1e9
    py, out = sys.executable, work / "out"
    merge_cli = [py, "-m", "backend", "merge", "--low", str(low), "--high", str(high)]
    os.environ["FLAB_CACHE"] = str(work / "cache")  # hashes cached here, not in the user's home
    subprocess.run([*merge_cli, "--alpha", "0.5", "--out", str(work / "warm")], check=True, capture_output=True)
    shutil.rmtree(work / "warm")

    rows = {}
    read_high = f"cat {high}/*.safetensors > /dev/null"
    rows["copy floor (read 2, write 1)"] = timed(f"{read_high} && cat {low}/*.safetensors > {out}", shell=True)
    os.remove(out)
    nine = " && ".join(f"cat {low}/*.safetensors > {out}{i}" for i in range(9))
    rows["copy floor (read 2, write 9)"] = timed(f"{read_high} && {nine}", shell=True)
    for i in range(9):
        os.remove(f"{out}{i}")
    rows["ours: single merge α=1.5"] = timed([*merge_cli, "--alpha", "1.5", "--out", str(out)])
    per_switch, load_merged = switch_vs_load(low, high, out)
    shutil.rmtree(out)
    alphas = [a for x in ALPHAS for a in ("--alpha", str(x))]
    rows["ours: 9-α one-pass sweep"] = timed([*merge_cli, *alphas, "--out", str(out)])
    shutil.rmtree(out)
    singles, peak, engine = 0.0, 0.0, 0.0
    for a in ALPHAS:
        t, m, e = timed([*merge_cli, "--alpha", str(a), "--out", str(out)])
        singles, peak, engine = singles + t, max(peak, m), engine + e
        shutil.rmtree(out)
    rows["ours: 9 separate single merges"] = (singles, peak, engine)
    rows["naive torch: load all, average, save"] = timed([py, "-c", NAIVE, str(low), str(high), str(out), "1.5"])
    shutil.rmtree(out)

    print(
        f"Qwen2 {params / 1e9:.2f}B params, bf16, {size_gb:.2f} GB per checkpoint, 400 MB shards, "
        f"{os.cpu_count()} cores"
    )
    print("  step (wall includes flushing the outputs to disk)  wall   engine only   peak RSS")
    for name, (t, m, e) in rows.items():
        print(f"  {name:<40} {t:7.2f} s  {f'{e:7.2f} s' if e is not None else '        -':>12}  {m:7.0f} MB")
    single, floor1 = rows["ours: single merge α=1.5"], rows["copy floor (read 2, write 1)"][0]
    sweep9, floor9 = rows["ours: 9-α one-pass sweep"], rows["copy floor (read 2, write 9)"][0]
    print(
        f"  single merge / copy floor          : {single[2] / floor1:.2f}x engine, "
        f"{single[0] / floor1:.2f}x wall (target <= 2)"
    )
    print(
        f"  9-α sweep / 9 single merges        : {sweep9[2] / engine:.2f}x engine, "
        f"{sweep9[0] / singles:.2f}x wall (target <= 0.25)"
    )
    print(f"  9-α sweep / copy floor (write 9)   : {sweep9[0] / floor9:.2f}x wall")
    print(
        "  naive torch / our single merge     : "
        f"{rows['naive torch: load all, average, save'][0] / single[0]:.2f}x wall"
    )
    print(
        f"  α switch in a loaded model         : {per_switch:.2f} s per switch; loading the merged folder: "
        f"{load_merged:.2f} s; ratio {per_switch / load_merged:.2f}x"
    )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
