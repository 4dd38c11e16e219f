"""The RL half of the GPU check: `python bench/gpu_check.py --rl --out FILE` on one CUDA GPU.

It needs torch, transformers, accelerate, safetensors, peft, TRL, datasets and pydantic (a lent
device carries the last three as wheels: docs/gpu.md) and nothing that the job's store or the
sandbox needs (no DuckDB, Ray or bubblewrap). In this order, within a few minutes on one GPU:

  1. RL through the job's own path, before anything else touches CUDA: a GPU lease that names
     the device in CUDA_VISIBLE_DEVICES, the RL memory plan, backend/rl/trainer.py's GRPOTrainer
     with the GPU defaults (bf16 mixed precision over float32 master weights, gradient
     checkpointing), 20 steps of a small random Qwen2, and its default save (float32). The reward
     is a stand-in (completion length): the sandbox judge does not run on the device;
  2. what that update is worth in each dtype: `merge inspect`'s figures of the float32 save
     against the base, then what a bf16 save keeps (share of the moved weights, norm ratio) and
     the bf16 copy against the base (how much of the difference is one ulp);
  3. a 2-step LoRA run (peft) whose final is the base with the adapters merged in float32;
  4. a merge on the device against the CPU, and live α switches (bench/gpu_check.py's own parts).

    python bench/gpu_check.py --rl --out gpu_check_rl.json            # on a CUDA machine
    python bench/gpu_check.py --rl --tiny --device cpu --out x.json   # the same path, tiny, on a CPU
"""

from __future__ import annotations

import datetime as dt
import gc
import json
import platform
import shutil
import time
import traceback
from pathlib import Path

import torch

from bench import gpu_check  # its pair of checkpoints, merge and switch checks

PROMPTS = 16


def rows() -> list[dict]:
    """Plain prompts in the job's dataset layout (backend/rl/task.py's rows)."""
    return [
        {"prompt": f"Problem {i}: read n and print n * {i + 2}.\n\nSolution:\n", "problem_id": f"p{i}", "repair": False}
        for i in range(PROMPTS)
    ]


def length_reward(prompts, completions, **kw) -> list[float]:
    """The stand-in reward: longer completions score more (a spread within each group, so GRPO moves)."""
    return [min(len(c), 256) / 256 for c in completions]


def grpo(low: str, out: Path, device: str, steps: int, tiny: bool, **fields) -> dict:
    """GRPO through backend/rl/trainer.py as a job runs it, minus the store: lease, plan, train, save."""
    from transformers import TrainerCallback
    from transformers.trainer_callback import PrinterCallback

    from backend.gpus import lease_gpus
    from backend.rl.memory import ModelShape, check_memory, device_bytes, setup_of
    from backend.rl.spec import RLSpec
    from backend.rl.task import Task
    from backend.rl.trainer import grpo_trainer, train

    cuda = device.startswith("cuda")
    group = 4 if tiny else 8
    spec = RLSpec(
        base=low,
        output_dir=str(out),
        steps=steps,
        num_generations=group,
        per_device_train_batch_size=group,
        max_completion_length=8 if tiny else 64,
        save_steps=max(1, steps // 2),
        gpus=1 if cuda else 0,
        prompt_format="plain",
        **fields,
    )
    logged: list[dict] = []

    class Log(TrainerCallback):
        def on_log(self, args, state, control, logs=None, **kw):
            logged.append({k: v for k, v in (logs or {}).items() if k in ("loss", "reward", "grad_norm")})

    lease = lease_gpus(out.parent / "gpus", 1, wait=False, label="gpu_check") if cuda else None
    try:
        report: dict = {"cuda_visible_devices": lease.gpus if lease else None}
        flags = spec.on_gpu(cuda)
        if cuda:
            setup = setup_of(spec, device_bytes(), flags["bf16"], flags["gradient_checkpointing"])
            plan = check_memory(ModelShape.of(low), setup)
            report["memory_plan_gib"] = {k: round(v / 2**30, 3) for k, v in plan.per_gpu.items()}
            torch.cuda.reset_peak_memory_stats()
        trainer = grpo_trainer(
            Task(spec, "plain", {}, rows()),
            [length_reward],
            {"use_vllm": False},
            use_cpu=not cuda,
            progress=False,
            callbacks=[Log()],
        )
        trainer.remove_callback(PrinterCallback)  # a dict per step would push the summary out of a short log
        report |= {
            "n_gpu": trainer.args.n_gpu,
            "bf16": trainer.args.bf16,
            **flags,
            "param_dtype": str(next(trainer.model.parameters()).dtype),
        }
        seconds, step = gpu_check.timed(lambda: train(trainer, spec))
        report |= {"steps": step, "seconds": seconds, "per_step_s": seconds / step, "logged": logged[-3:]}
        if cuda:
            report["peak_allocated_gib"] = torch.cuda.max_memory_allocated() / 2**30
        trainer = None  # its model and optimizer freed before the next part
    finally:
        if lease:
            lease.release()
        gc.collect()
        if cuda:
            torch.cuda.empty_cache()
    return report


def worth(low: str, final: Path) -> dict:
    """The float32 save against the base, what a bf16 save keeps, and the bf16 copy against the base."""
    from backend.merge.diff import inspect, update_survival, verdict
    from backend.rl.task import cast_checkpoint

    as_bf16 = final.with_name("final-bf16")
    shutil.copytree(final, as_bf16)
    cast_checkpoint(as_bf16, "BF16")
    fp32, bf16 = inspect(low, final), inspect(low, as_bf16)
    return {
        "fp32_vs_base": fp32,
        "bf16_save_keeps": update_survival(low, final, "BF16"),
        "bf16_vs_base": bf16,
        "bf16_verdict": verdict(bf16),
    }


def lora(low: str, root: Path, device: str, tiny: bool) -> dict:
    from transformers import AutoModelForCausalLM

    from backend.merge.diff import inspect

    report = grpo(low, root / "lora", device, 2, tiny, lora_rank=8, learning_rate=1e-3)
    final = AutoModelForCausalLM.from_pretrained(root / "lora" / "final")
    report["final_dtype"] = str(next(final.parameters()).dtype)
    report["final_vs_base"] = inspect(low, root / "lora" / "final")
    return report


def main(args) -> None:
    import tempfile

    steps = 2 if args.tiny else 20
    report = {"date": dt.date.today().isoformat(), "torch": torch.__version__, "versions": versions()}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        low, high, report["params"] = gpu_check.build_pair(root, gpu_check.TINY if args.tiny else gpu_check.SHAPES)
        parts = (
            ("rl", lambda: grpo(low, root / "rl", args.device, steps, args.tiny)),  # first: the lease precedes CUDA
            ("update_worth", lambda: worth(low, root / "rl" / "final")),
            ("lora", lambda: lora(low, root, args.device, args.tiny)),
            ("merge", lambda: gpu_check.check_merge(low, high, root, args.device)),
            ("alpha_switch", lambda: gpu_check.check_switch(low, high, root, args.device)),
        )
        for name, run in parts:
            try:
                report[name] = run()
            except Exception as exc:  # one failing part must not hide the others' figures
                report[name] = {"error": f"{type(exc).__name__}: {str(exc)[:400]}"}
                traceback.print_exc()  # the device's output keeps its tail: where it failed
            print(summary(name, report[name]), flush=True)
    report["device"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else platform.processor()
    report["seconds"] = time.perf_counter() - started
    Path(args.out).write_text(json.dumps(report, indent=2))
    print(f"wrote {args.out} ({report['seconds']:.0f}s)")


def summary(name: str, part: dict) -> str:
    """One compact line per part; the JSON has everything."""
    if "error" in part:
        return f"{name}: ERROR {part['error']}"
    if name in ("rl", "lora"):
        return (
            f"{name}: {part['steps']} steps, {part['per_step_s']:.2f} s/step, n_gpu {part['n_gpu']}, "
            f"bf16 {part['bf16']}, checkpointing {part['gradient_checkpointing']}, params {part['param_dtype']}, "
            f"peak {part.get('peak_allocated_gib', 0):.2f} GiB, plan {part.get('memory_plan_gib')}"
        )
    if name == "update_worth":
        kept, fp32, bf16 = part["bf16_save_keeps"], part["fp32_vs_base"], part["bf16_vs_base"]
        return (
            f"update_worth: fp32 save differs from the base in {fp32['share_differ']:.2%} of weights "
            f"(relative norm {fp32['relative_norm']:.2e}); a bf16 save keeps {kept['update_kept_share']:.2%} "
            f"of the moved weights (norm ratio {kept['update_norm_ratio']:.3f}); bf16 copy: "
            f"{bf16['share_differ']:.2%} differ, {bf16['one_ulp_of_differing']:.0%} of those by one ulp"
        )
    return f"{name}: {json.dumps(part)}"


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("transformers", "accelerate", "trl", "datasets", "peft", "pydantic"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "absent"
    return out
