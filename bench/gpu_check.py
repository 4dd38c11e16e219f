"""The one GPU check: every GPU path on one GPU, no network, one JSON report (at most ~8 minutes).

Builds its own random-weight Qwen2 pair with 0.5B-class shapes (hidden 896, 24 layers, 14 heads,
2 KV heads, MLP 4864; a 2,000-token vocabulary from our own tokenizer, so ~0.36B parameters),
then measures:
  1. merge: `--device cuda` against the CPU path, same pair, same α, as a ratio;
  2. rollouts: the transformers engine on CUDA in bf16, batch 64, tokens per second;
  3. live α switch on CUDA: seconds per switch against loading the merged folder onto the GPU, and
     θ_α from host-pinned endpoints copied into device scratch and blended there (bit-equal?);
  4. RL: 5 TRL GRPO steps on CUDA with the sandbox reward (seconds per step, the reward logged);
  5. vLLM, when it imports (`make gpu-env`): an engine with the α switch generates; three α
     switches, each compared bit for bit with an engine loading that α's merged folder (so several
     engines are built and closed in a row in one process; the weights' digests come back through
     collective_rpc of a named worker-extension method, as vLLM's msgpack requires); seconds per switch.
     Without vLLM the report says "skipped" (CI's tiny CPU run; tests/test_benchmarks.py runs this
     part through the vLLM stand-in).

    python bench/gpu_check.py [--out gpu_check.json]        # on a CUDA machine
    python bench/gpu_check.py --tiny --device cpu           # the same script, tiny, on a CPU (CI smoke)
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SHAPES = {"hidden": 896, "layers": 24, "heads": 14, "kv_heads": 2, "intermediate": 4864}
# every worker call is a named method of our worker extension, which merged-folder engines get too:
# vLLM sends collective_rpc to its engine process as msgpack, which refuses a Python function
# unless VLLM_ALLOW_INSECURE_SERIALIZATION=1 (vLLM 0.31.0 v1/serial_utils.py:220-226)
EXTENSION = "backend.merge.live_vllm.AlphaSwitchExtension"
TINY = {"hidden": 64, "layers": 2, "heads": 4, "kv_heads": 2, "intermediate": 128}


def build_pair(root: Path, shapes: dict) -> tuple[str, str, int]:
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from backend.lab.tiny import train_tokenizer

    tokenizer = train_tokenizer(["```python\nprint(sum(map(int, input().split())))\n```"] * 50, vocab_size=2000)
    paths = []
    for name, seed in (("low", 1), ("high", 2)):
        torch.manual_seed(seed)
        config = Qwen2Config(
            vocab_size=len(tokenizer),
            hidden_size=shapes["hidden"],
            intermediate_size=shapes["intermediate"],
            num_hidden_layers=shapes["layers"],
            num_attention_heads=shapes["heads"],
            num_key_value_heads=shapes["kv_heads"],
            max_position_embeddings=2048,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id,
        )
        model = Qwen2ForCausalLM(config).to(torch.bfloat16)
        folder = root / name
        model.save_pretrained(folder)
        tokenizer.save_pretrained(folder)
        paths.append(str(folder))
        params = sum(p.numel() for p in model.parameters())
    return paths[0], paths[1], params


def timed(fn) -> tuple[float, object]:
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    t = time.perf_counter()
    out = fn()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return time.perf_counter() - t, out


def check_merge(low: str, high: str, root: Path, device: str) -> dict:
    from backend.merge.engine import merge
    from backend.merge.spec import Merge

    spec = Merge.at_alpha(low, high, 1.5)
    merge(spec, root / "warm", progress=False)  # page cache and CUDA context warm
    cpu, _ = timed(lambda: merge(spec, root / "m-cpu", progress=False))
    gpu, _ = timed(lambda: merge(spec, root / "m-dev", device=device, progress=False))
    same = (root / "m-cpu" / "model.safetensors").read_bytes() == (root / "m-dev" / "model.safetensors").read_bytes()
    return {"cpu_s": cpu, "device_s": gpu, "device_over_cpu": gpu / cpu, "identical_bytes": same}


def check_rollouts(low: str, device: str, batch: int) -> dict:
    from backend.rollout.engines import TransformersEngine
    from backend.rollout.spec import SamplingSpec

    engine = TransformersEngine(low, device=device, batch_size=batch, dtype=torch.bfloat16)
    convs = [[{"role": "user", "content": f"problem {i}: read n, print n * 2"}] for i in range(batch)]
    spec = SamplingSpec(n=1, temperature=0.7, max_tokens=128, seed=0)
    engine.generate(convs[:2], spec)
    seconds, out = timed(lambda: engine.generate(convs, spec))
    tokens = sum(c.completion_tokens for cs in out for c in cs)
    return {"batch": batch, "tokens": tokens, "seconds": seconds, "tokens_per_s": tokens / seconds}


def check_switch(low: str, high: str, root: Path, device: str) -> dict:
    from transformers import AutoModelForCausalLM

    from backend.merge.live import LiveAlphaSwitch, blended, load_endpoints

    model = AutoModelForCausalLM.from_pretrained(low, dtype=torch.bfloat16).to(device)
    switch = LiveAlphaSwitch(model, low, high)
    alphas = (-1.0, -0.5, 0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0)
    seconds, _ = timed(lambda: [switch.set_alpha(a) for a in alphas])
    load, _ = timed(lambda: AutoModelForCausalLM.from_pretrained(root / "m-cpu", dtype=torch.bfloat16).to(device))
    per = seconds / len(alphas)
    # host-pinned endpoints (vLLM's --switch-endpoints host): copied into device scratch, blended there
    host = load_endpoints(low, high, "cpu", pin=device.startswith("cuda"))
    target = torch.device(device)
    hosted, _ = timed(lambda: [t.sum() for a in alphas for _, t in blended(host, a, device=target)])
    pairs = zip(blended(host, 1.5, device=target), blended(switch.endpoints, 1.5), strict=True)
    same = all(torch.equal(a, b) for (_, a), (_, b) in pairs)
    return {
        "per_switch_s": per,
        "load_merged_s": load,
        "switch_over_load": per / load,
        "host_endpoints_per_blend_s": hosted / len(alphas),
        "host_blend_identical": same,
    }


def check_rl(low: str, root: Path, steps: int) -> dict:
    from backend.problems.build import build_builtin
    from backend.records import Metric
    from backend.rl.spec import RLSpec
    from backend.rl.trainer import run_rl
    from backend.store import Store

    store = Store(root / "rl.duckdb")
    build_builtin(store, only=["max-subarray", "count-pairs-sum"], progress=False)
    spec = RLSpec(
        base=low,
        output_dir=str(root / "rl"),
        reward="R_3",
        bench="builtin",
        steps=steps,
        num_generations=4,
        per_device_train_batch_size=4,
        max_completion_length=128,
        save_steps=steps,
    )
    seconds, exp = timed(lambda: run_rl(store, spec, progress=False))
    rewards = [m.value for m in store.select(Metric, {"experiment_id": exp}) if m.name == "reward_mean"]
    return {"steps": steps, "seconds": seconds, "per_step_s": seconds / steps, "reward_mean_logged": rewards}


def check_vllm(low: str, high: str, root: Path, alphas=(-0.5, 0.5, 1.5)) -> dict:
    import importlib.util

    if importlib.util.find_spec("vllm") is None or not torch.cuda.is_available():
        return {"skipped": "vllm does not import here (build the GPU environment with `make gpu-env`)"}
    from backend.alpha import alpha_text
    from backend.merge.engine import merge
    from backend.merge.spec import Merge
    from backend.rollout.spec import SamplingSpec
    from backend.rollout.vllm_engine import VLLMEngine

    prompts = [[{"role": "user", "content": f"problem {i}: read n, print n * 2"}] for i in range(8)]
    spec = SamplingSpec(n=2, temperature=0.7, max_tokens=64, seed=0)
    engine = VLLMEngine(low, alpha_switch=(low, high), max_model_len=512)
    tokens = sum(c.completion_tokens for cs in engine.generate(prompts, spec) for c in cs)
    switch = engine.alpha_switch(low, high)
    switched, seconds = {}, []
    for a in alphas:
        took, _ = timed(lambda a=a: switch.set_alpha(a))
        seconds.append(took)
        switched[a] = engine.llm.collective_rpc("flab_weights_digest")[0]
    engine.close()
    identical = {}
    for a in alphas:  # one engine per merged folder, each closed before the next starts
        folder = root / f"vllm-merged-{alpha_text(a)}"
        merge(Merge.at_alpha(low, high, a), folder, progress=False)
        loaded = VLLMEngine(str(folder), max_model_len=512, worker_extension_cls=EXTENSION)
        identical[alpha_text(a)] = loaded.llm.collective_rpc("flab_weights_digest")[0] == switched[a]
        loaded.close()
    return {
        "tokens": tokens,
        "per_switch_s": sum(seconds) / len(seconds),
        "switch_s": seconds,
        "identical_to_merged_folder": identical,
        "engines_in_a_row": 1 + len(alphas),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="gpu_check.json")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--tiny", action="store_true", help="tiny shapes, for a smoke run on any machine")
    parser.add_argument("--rl", action="store_true", help="the RL half instead (bench/gpu_check_rl.py)")
    args = parser.parse_args()
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        sys.exit("bench/gpu_check.py: no CUDA device; run it on a GPU machine, or pass --tiny --device cpu")
    if args.rl:
        from bench.gpu_check_rl import main as rl_main

        return rl_main(args)
    report = {
        "date": dt.date.today().isoformat(),
        "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else platform.processor(),
        "torch": torch.__version__,
    }
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        low, high, params = build_pair(root, TINY if args.tiny else SHAPES)
        report["params"] = params
        for name, run in (
            ("merge", lambda: check_merge(low, high, root, args.device)),
            ("rollouts", lambda: check_rollouts(low, args.device, 8 if args.tiny else 64)),
            ("alpha_switch", lambda: check_switch(low, high, root, args.device)),
            ("rl", lambda: check_rl(low, root, 1 if args.tiny else 5)),
            ("vllm", lambda: check_vllm(low, high, root)),
        ):
            try:
                report[name] = run()
            except Exception as exc:  # one failing path must not hide the others' figures
                report[name] = {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}
            print(name, json.dumps(report[name]), flush=True)
    Path(args.out).write_text(json.dumps(report, indent=2))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
