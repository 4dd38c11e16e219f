"""The pages' figures, built from a `Selection` and the experiments' read models: the Frontier,
Churn and pass@k pages draw these, and the export zip writes the same objects, so the zip's
figures are the page's (tests/pages/test_read_model.py compares their JSON)."""

from __future__ import annotations

from dataclasses import dataclass

import plotly.graph_objects as go
import polars as pl

from backend.analysis.churn import solve_matrix, solve_rates
from backend.analysis.frame import default_passk_selection
from backend.analysis.provenance import Provenance
from backend.errors import UserError
from backend.store_queries import EVERY_SAMPLE, SampleFilter
from backend.vocab import SOLVED_AT
from dashboard import data
from dashboard.experiment_view import BEST, ExperimentView, Pools
from dashboard.paper_views import BASELINE, gain_curves, recovery_overlay, trend_bands
from dashboard.passk_plots import passk_figure
from dashboard.plots import churn_heatmap, outcome_fractions, solve_rate, with_provenance
from dashboard.scatter import failure_scatter

ORDERINGS = {"difficulty": "difficulty, then α of peak", "cluster": "hierarchical clustering"}
GRID_ROWS = 100  # problems per page of the churn grid


@dataclass(frozen=True)
class Selection:
    """What the pages show of one experiment: its filters and every choice a page offers."""

    exp: str
    filters: SampleFilter = EVERY_SAMPLE
    solved_at: float = SOLVED_AT
    averaging: str = "per_problem"
    overlays: tuple[str, ...] = ()
    ordering: str = "difficulty"
    grid_page: int = 1
    checkpoints: tuple[str, ...] | None = None  # pass@k's single curves; None: the page's default
    custom: tuple[str, ...] = ()  # pass@k's custom pool
    stacked: bool = False  # the outcome chart as stacked fractions (no CIs) instead of one panel per class

    @property
    def label(self) -> str | None:
        """The experiment named under each title; overlaid figures name theirs in the legend."""
        return None if self.overlays else data.experiment_label(self.exp)


def views(v: ExperimentView, sel: Selection) -> dict[str, ExperimentView]:
    """label → read model of the experiment (v: the one the page already shows, so its caption,
    tables and charts are one snapshot) and of each overlay that has results under the filters."""
    out = {data.experiment_label(sel.exp): v}
    for exp in sel.overlays:
        try:
            out[data.experiment_label(exp)] = data.experiment_view(exp, sel.filters)
        except UserError:
            continue  # the page says which experiments it shows
    return out


def frontier_figures(v: ExperimentView, sel: Selection) -> dict[str, tuple[go.Figure, pl.DataFrame]]:
    """The Frontier page's three charts, each with the table it is drawn from."""
    vs = views(v, sel)
    shown = {label: v.frontier(sel.averaging) for label, v in vs.items()}
    table = next(iter(shown.values()))
    if not sel.overlays:  # one experiment, named under each title: a legend entry of its long name says nothing
        shown = table
    scatter = failure_scatter(shown, experiment=sel.label)
    out = {
        "outcomes_vs_alpha": (outcome_fractions(shown, experiment=sel.label, stacked=sel.stacked), table),
        "frontier_scatter": (scatter, table),
        "solve_rate": (solve_rate(shown, experiment=sel.label), table),
    }
    if not sel.overlays:  # the paper's tests are of one experiment
        if sel.averaging == "per_problem" and (recovered := v.recovery()):  # per problem, then averaged
            recovery_overlay(scatter, recovered)
        result = v.trend()
        out["trend_bands"] = (trend_bands(result), pl.DataFrame(result["bands"]))
    prov = provenance(v, sel)  # under each title, and in each figure's layout.meta
    named = not sel.overlays  # overlaid experiments are named in the legend
    return {name: (with_provenance(fig, prov, named), table) for name, (fig, table) in out.items()}


def provenance(v: ExperimentView, sel: Selection) -> Provenance:
    """What every figure, CSV and export of this selection states about how it was made."""
    return v.provenance(sel.solved_at, sel.averaging)


def churn_rows(v: ExperimentView, sel: Selection) -> list[str]:
    """The problems on the grid's current page, in the chosen order."""
    order = v.order(sel.ordering)
    start = (max(1, sel.grid_page) - 1) * GRID_ROWS
    return order[start : start + GRID_ROWS] or order[:GRID_ROWS]


def churn_figure(v: ExperimentView, sel: Selection) -> tuple[go.Figure, pl.DataFrame]:
    o = v.outcomes
    index = [o.problems.index(p) for p in churn_rows(v, sel)]
    fig = churn_heatmap(
        solve_rates(o)[index],
        [o.problems[i] for i in index],
        [o.titles[i] for i in index],
        o.labels,
        o.correct[index],
        o.n[index],
        experiment=data.experiment_label(sel.exp),
    )
    return with_provenance(fig, provenance(v, sel)), solve_matrix(o)


def passk_pools(v: ExperimentView, sel: Selection) -> dict[str, list[str]]:
    """The standard and greedy pools, and the custom one when the page's pool builder holds one."""
    pools = v.pools()
    custom = [c for c in sel.custom if c in v.outcomes.checkpoints]
    return pools | ({"custom": custom} if custom else {})


def passk_curves(v: ExperimentView, sel: Selection) -> pl.DataFrame:
    """The pass@k page's curves: chosen checkpoints and multi-member pools of one experiment, or,
    with overlays, every experiment's pools with an `experiment` column."""
    if sel.overlays:
        parts = [
            pl.concat(
                [w.bands(_pools(w.pools())), w.held_out_best(_pools(w.pools()))], how="diagonal_relaxed"
            ).with_columns(pl.lit(label).alias("experiment"))
            for label, w in views(v, sel).items()
        ]
        return pl.concat(parts)
    o = v.outcomes
    wanted = passk_defaults(v) if sel.checkpoints is None else sel.checkpoints
    labels = dict(zip(o.checkpoints, o.labels, strict=True))
    shown = [(labels[c], (c,)) for c in o.checkpoints if c in wanted]
    shown += [(f"pool: {n}", tuple(m)) for n, m in passk_pools(v, sel).items() if len(m) > 1]
    # the best single at each k is drawn by passk_chart as a curve of its own (best_single)
    return v.bands(tuple(shown)) if shown else pl.DataFrame()


def baselines(v: ExperimentView) -> list[str]:
    """The checkpoints the gain table names as the best single at some k, in k order."""
    table = v.gains(_pools(v.pools()))
    return table.filter(pl.col("pool") == BEST)["baseline"].unique(maintain_order=True).to_list()


def passk_defaults(v: ExperimentView) -> list[str]:
    """The pass@k page's first single curves: the endpoints and every checkpoint the gain table's
    baseline names at some k (so each best single it names is drawn)."""
    keep = set(default_passk_selection(v.outcomes)) | set(baselines(v))
    return [c for c in v.outcomes.checkpoints if c in keep]


def best_single(v: ExperimentView, sel: Selection) -> pl.DataFrame:
    """The gain table's best single at each k (k, pass_at_k, lo, hi), its checkpoint by label."""
    labels = dict(zip(v.outcomes.checkpoints, v.outcomes.labels, strict=True))
    rows = v.gains(_pools(passk_pools(v, sel))).filter(pl.col("pool") == BEST)
    return rows.select("k", "pass_at_k", "lo", "hi", pl.col("baseline").replace_strict(labels).alias("checkpoint"))


def _pools(pools: dict[str, list[str]]) -> Pools:
    return tuple((name, tuple(members)) for name, members in pools.items())


def passk_chart(v: ExperimentView, sel: Selection) -> tuple[go.Figure, pl.DataFrame] | None:
    curves = passk_curves(v, sel)
    if not len(curves):
        return None
    best = None if sel.overlays else best_single(v, sel)
    fig = passk_figure(curves, experiment=sel.label, best=best)
    return with_provenance(fig, provenance(v, sel), not sel.overlays), curves


def gains(v: ExperimentView, sel: Selection) -> pl.DataFrame:
    """The gain table with its baseline at each k named as the pages name checkpoints (α=0.5, SFT)."""
    labels = dict(zip(v.outcomes.checkpoints, v.outcomes.labels, strict=True))
    table = v.gains(_pools(passk_pools(v, sel)))
    return table.with_columns(pl.col("baseline").replace_strict(labels)).rename({"baseline": BASELINE})


def gains_chart(v: ExperimentView, sel: Selection) -> tuple[go.Figure, pl.DataFrame]:
    table = gains(v, sel)
    return with_provenance(gain_curves(table), provenance(v, sel)), table


def all_figures(v: ExperimentView, sel: Selection) -> dict[str, tuple[go.Figure, pl.DataFrame]]:
    """Every figure of the Frontier, Churn and pass@k pages for this selection, as each page draws it."""
    out = frontier_figures(v, sel)
    out["churn_heatmap"] = churn_figure(v, sel)
    if chart := passk_chart(v, sel):
        out["passk_curves"] = chart
    out["ensemble_gains"] = gains_chart(v, sel)
    return out
