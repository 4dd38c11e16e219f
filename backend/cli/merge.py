"""`python -m backend merge ...`: the two-endpoint α form, the general form, task vectors, mergekit."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from backend.cli.options import DbOption, open_store
from backend.errors import UserError
from backend.merge.spec import SHARD_BYTES, MergeSpec, from_mergekit_yaml, parse_model_weight, to_mergekit_yaml


def alpha_folder(alpha: float) -> str:
    return f"alpha_{alpha:g}"


def merge_command(
    out: Annotated[Path, typer.Option("--out", help="Output folder (with several α: one alpha_<α>/ per value).")],
    low: Annotated[Path | None, typer.Option("--low", help="θ_low checkpoint folder (α = 0).")] = None,
    high: Annotated[Path | None, typer.Option("--high", help="θ_high checkpoint folder (α = 1).")] = None,
    alpha: Annotated[
        list[float] | None, typer.Option("--alpha", help="Any real α; repeat for a one-pass sweep.")
    ] = None,
    model: Annotated[list[str] | None, typer.Option("--model", help="DIR:WEIGHT, repeatable (general form).")] = None,
    base: Annotated[
        Path | None, typer.Option("--base", help="With --model: task vectors θ_base + Σ λ(θ_i − θ_base).")
    ] = None,
    mergekit: Annotated[
        Path | None, typer.Option("--mergekit", help="Read the merge from a mergekit linear YAML.")
    ] = None,
    export_mergekit: Annotated[
        Path | None, typer.Option("--export-mergekit", help="Also write the merge as mergekit YAML.")
    ] = None,
    dtype: Annotated[str, typer.Option("--dtype", help="auto | float32 | bfloat16 | float16")] = "auto",
    allow_nonfinite: Annotated[
        bool, typer.Option("--allow-nonfinite", help="Keep inf/NaN tensors instead of failing.")
    ] = False,
    device: Annotated[str, typer.Option("--device", help="cpu | cuda")] = "cpu",
    shard_size_mb: Annotated[int, typer.Option("--shard-size-mb")] = SHARD_BYTES >> 20,
    overwrite: Annotated[bool, typer.Option("--overwrite")] = False,
    register: Annotated[
        bool, typer.Option("--register", help="Record the outputs as checkpoints rows in --db.")
    ] = False,
    db: DbOption = None,
) -> None:
    """Average checkpoints: θ_α = α·θ_high + (1−α)·θ_low for any real α, streamed tensor by tensor."""
    # torch only once a merge runs, so that `--help` and argument errors answer at once
    from backend.merge.cache import register_merged
    from backend.merge.engine import sweep

    kw = {"dtype": dtype, "allow_nonfinite": allow_nonfinite}
    if low or high or alpha:
        if not (low and high and alpha):
            raise UserError("the α form needs --low DIR --high DIR and at least one --alpha")
        specs = [MergeSpec.alpha(str(low), str(high), a, **kw) for a in alpha]
        outs = [out] if len(specs) == 1 else [out / alpha_folder(a) for a in alpha]
    elif model:
        pairs = [parse_model_weight(m) for m in model]
        paths, weights = [p for p, _ in pairs], [w for _, w in pairs]
        specs = [MergeSpec.task_vectors(str(base), paths, weights, **kw) if base else MergeSpec(paths, weights, **kw)]
        outs = [out]
    elif mergekit:
        specs, outs = [from_mergekit_yaml(mergekit)], [out]
    else:
        raise UserError("say what to merge: --low/--high/--alpha, --model DIR:WEIGHT ..., or --mergekit FILE")
    if export_mergekit:
        export_mergekit.write_text(to_mergekit_yaml(specs[0]))
    results = sweep(specs, outs, device=device, shard_bytes=shard_size_mb << 20, overwrite=overwrite)
    for r in results:
        typer.echo(f"{r.out}  weights={r.spec.weights}" + (f"  non-finite: {r.nonfinite}" if r.nonfinite else ""))
    if register:
        store = open_store(db)
        for r in results:
            row = register_merged(store, r.out, r.spec)
            typer.echo(f"registered {row.id} ({row.label})")
    typer.echo(f"{len(results)} merge(s) in {results[0].seconds:.2f}s")


def register(app: typer.Typer) -> None:
    app.command("merge")(merge_command)
