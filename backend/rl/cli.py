"""`python -m backend rl ...`: a GRPO run with a sandbox reward."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from backend.cli import DbOption, open_store
from backend.jobs.cli import launch
from backend.jobs.spec import validate_spec
from backend.rl.trainer import RLSpec


def rl_command(
    base: Annotated[Path, typer.Option("--base", help="Base/SFT checkpoint folder.")],
    out: Annotated[Path, typer.Option("--out", help="Output folder for checkpoints.")],
    reward: Annotated[
        str, typer.Option("--reward", help="R_1…R_6 | R_inf | partial_discrete | partial_continuous")
    ] = "R_inf",
    bench: Annotated[str, typer.Option("--bench")] = "builtin",
    difficulty: Annotated[str | None, typer.Option("--difficulty")] = None,
    problem: Annotated[list[str] | None, typer.Option("--problem")] = None,
    limit: Annotated[int | None, typer.Option("--limit")] = None,
    steps: Annotated[int, typer.Option("--steps")] = 100,
    num_generations: Annotated[int, typer.Option("--num-generations")] = 8,
    batch_size: Annotated[int, typer.Option("--per-device-train-batch-size")] = 8,
    max_completion_length: Annotated[int, typer.Option("--max-completion-length")] = 512,
    learning_rate: Annotated[float, typer.Option("--learning-rate")] = 1e-6,
    beta: Annotated[float, typer.Option("--beta")] = 0.0,
    loss_type: Annotated[str, typer.Option("--loss-type")] = "dapo",
    save_steps: Annotated[int, typer.Option("--save-steps")] = 50,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    temperature: Annotated[float, typer.Option("--temperature")] = 1.0,
    use_vllm: Annotated[bool, typer.Option("--use-vllm", help="Colocated vLLM generation (GPU).")] = False,
    backend: Annotated[str, typer.Option("--backend", help="Judge sandbox: bwrap | docker | none")] = "bwrap",
    executor: Annotated[str, typer.Option("--executor", help="local | ray (placed on a GPU node)")] = "local",
    ray_address: Annotated[str | None, typer.Option("--ray-address", help="auto | HOST:PORT")] = None,
    num_gpus: Annotated[float, typer.Option("--num-gpus", help="GPUs the ray executor asks for.")] = 1.0,
    detach: Annotated[bool, typer.Option("--detach", help="Return at once; the job runs on.")] = False,
    db: DbOption = None,
) -> None:
    """Train with TRL's GRPOTrainer as a job (detach, cancel, resume from the last checkpoint);
    the reward is the sandbox judge's R_k or partial credit."""
    data = {
        "base": str(base), "output_dir": str(out.resolve()), "reward": reward, "bench": bench, "difficulty": difficulty,
        "problems": problem or [], "limit": limit, "steps": steps, "num_generations": num_generations,
        "per_device_train_batch_size": batch_size, "max_completion_length": max_completion_length,
        "learning_rate": learning_rate, "beta": beta, "loss_type": loss_type, "save_steps": save_steps, "seed": seed,
        "temperature": temperature, "use_vllm": use_vllm, "backend": backend, "executor": executor,
        "ray_address": ray_address, "num_gpus": num_gpus,
    }  # fmt: skip
    spec = validate_spec(RLSpec, data)
    if spec.executor == "local":  # refused here, not inside the started job
        from backend.rl.trainer import vllm_options

        vllm_options(spec.use_vllm)
    launch(open_store(db), spec, detach)


def register(app: typer.Typer) -> None:
    app.command("rl")(rl_command)
