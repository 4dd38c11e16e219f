"""`python -m backend rollout ...`: sample a checkpoint on a problem set in one setting."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from backend.cli import DbOption, open_store
from backend.records import Sample
from backend.rollout.run import RolloutSpec, run_rollout
from backend.rollout.spec import SamplingSpec


def rollout_command(
    checkpoint: Annotated[Path, typer.Option("--checkpoint", help="Hugging Face checkpoint folder.")],
    bench: Annotated[str, typer.Option("--bench")] = "builtin",
    difficulty: Annotated[str | None, typer.Option("--difficulty")] = None,
    problem: Annotated[list[str] | None, typer.Option("--problem", help="BENCH/ID; repeatable.")] = None,
    limit: Annotated[int | None, typer.Option("--limit", help="At most N problems.")] = None,
    setting: Annotated[str, typer.Option("--setting", help="reasoning | tool | agentic")] = "reasoning",
    n: Annotated[int, typer.Option("-n", help="Samples per problem.")] = 16,
    temperature: Annotated[float, typer.Option("--temperature")] = 1.0,
    top_p: Annotated[float, typer.Option("--top-p")] = 1.0,
    max_tokens: Annotated[int, typer.Option("--max-tokens")] = 1024,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    engine: Annotated[str, typer.Option("--engine", help="auto | transformers | vllm")] = "auto",
    db: DbOption = None,
) -> None:
    """Sample n solutions per problem and store them (re-running the same command resumes)."""
    spec = RolloutSpec(
        checkpoint=str(checkpoint), bench=bench, difficulty=difficulty, problems=problem or [], limit=limit,
        setting=setting, sampling=SamplingSpec(n, temperature, top_p, max_tokens, seed), engine=engine,
    )  # fmt: skip
    store = open_store(db)
    exp = run_rollout(store, spec)
    typer.echo(f"experiment {exp}: {store.count(Sample, {'experiment_id': exp})} samples stored")


def register(app: typer.Typer) -> None:
    app.command("rollout")(rollout_command)
