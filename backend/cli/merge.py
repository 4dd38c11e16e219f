"""`python -m backend merge ...`: the two-endpoint α form, the general form, task vectors, mergekit."""

from __future__ import annotations

import typer
from typer.core import TyperGroup

from backend.cli.options import DB, JsonOption, keyword, open_store, spec_command
from backend.merge.spec import InspectRequest, MergeConfig, to_mergekit_yaml


@spec_command(MergeConfig, DB)
def merge_command(req: MergeConfig, db=None) -> None:
    """Average checkpoints: θ_α = α·θ_high + (1−α)·θ_low for any real α, streamed tensor by tensor."""
    # torch only once a merge runs, so that `--help` and argument errors answer at once
    from backend.hub import local_checkpoints, resolve_checkpoint
    from backend.merge.cache import register_merged
    from backend.merge.engine import sweep

    req = local_checkpoints(req)  # hub names (--low, --high, --base) -> their snapshot folders
    specs, outs = req.merges(lambda ref: str(resolve_checkpoint(ref)))  # --model DIRs too
    if req.export_mergekit:
        req.export_mergekit.write_text(to_mergekit_yaml(specs[0]))
    results = sweep(specs, outs, device=req.device, shard_bytes=req.shard_size_mb << 20, overwrite=req.overwrite)
    for r in results:
        typer.echo(f"{r.out}  weights={r.spec.weights}" + (f"  non-finite: {r.nonfinite}" if r.nonfinite else ""))
    if req.register_outputs:
        store = open_store(db)
        for r in results:
            row = register_merged(store, r.out, r.spec)
            typer.echo(f"registered {row.id} ({row.label})")
    typer.echo(f"{len(results)} merge(s) in {results[0].seconds:.2f}s")


class MergeOrInspect(TyperGroup):
    """`merge ...` averages (as it always has); `merge inspect ...` compares two checkpoints."""

    def parse_args(self, ctx, args):
        if not args or args[0] not in self.commands:
            args = ["average", *args]
        return super().parse_args(ctx, args)


@spec_command(InspectRequest, keyword("as_json", JsonOption, False))
def inspect_command(req: InspectRequest, as_json: bool = False) -> None:
    """How two endpoints differ: share of weights that differ, share one ulp of their dtype apart
    (where both share a dtype), ‖θ_high − θ_low‖ / ‖θ_low‖ and cos(θ_low, θ_high); then whether an
    α sweep has anything to scale."""
    import json

    from backend.hub import local_checkpoints
    from backend.merge.diff import inspect, verdict

    req = local_checkpoints(req)  # hub names -> their snapshot folders, as for the merge itself
    figures = inspect(req.low, req.high)
    if as_json:
        typer.echo(json.dumps(figures | {"verdict": verdict(figures)}))
        return
    typer.echo(f"weights compared      {figures['weights']:,} ({figures['dtypes']})")
    typer.echo(f"share that differ     {figures['share_differ']:.4%}")
    typer.echo(
        f"share one ulp apart   {figures['share_one_ulp']:.4%} "
        f"({figures['one_ulp_of_differing']:.1%} of those that differ)"
    )
    typer.echo(f"relative norm         {figures['relative_norm']:.3e}")
    typer.echo(f"cosine                {figures['cosine']:.9f}")
    typer.echo(verdict(figures))


def register(app: typer.Typer) -> None:
    merge_app = typer.Typer(
        cls=MergeOrInspect, help="Average checkpoints (`merge --low A --high B ...`) or compare two (`merge inspect`)."
    )
    merge_app.command("average", hidden=True)(merge_command)
    merge_app.command("inspect")(inspect_command)
    app.add_typer(merge_app, name="merge")
