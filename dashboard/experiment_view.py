"""One read model per (database, experiment, filters): everything the pages, the downloads and the
export zip show of one experiment, computed from one snapshot of its outcomes.

Every part hangs off one `ExperimentView`, so a running sweep's captions, tables and charts show
the same rows (parts cached apart, each with its own expiry, would let a caption move on while the
charts stay at the first α point). A view is built for one `stamp` of the experiment's
evaluations (row count and a fingerprint, one cheap query): a new row makes a new view, an
unchanged experiment keeps its view. The rules (averaging, solved threshold, row order, pools)
pick memoized parts of the view.
No Streamlit here: dashboard/data.py caches views, bench/ builds them directly.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import polars as pl

from backend.analysis.churn import churn_stats, flipping_problems, order_problems
from backend.analysis.ensembles import (
    BEST,
    gain_table,
    greedy_pool,
    merged,
    pool_bands,
    sampled_kmax,
    sampled_problems,
    standard_pools,
)
from backend.analysis.frame import Outcomes, to_outcomes
from backend.analysis.frontier import format_causes, frontier_table, optimization_by_tier
from backend.store import Store
from backend.store_queries import EVERY_SAMPLE, SampleFilter

Pools = tuple[tuple[str, tuple[str, ...]], ...]  # (name, members) pairs: hashable, in the page's order
GREEDY = "greedy (max pass@max)"
HELD_OUT_BEST = "best single (held out)"


class ExperimentView:
    """An experiment's outcomes under some filters, and every table derived from them (each part
    computed on first use and kept for the life of the view)."""

    def __init__(self, db: str | Path, experiment: str, filters: SampleFilter, stamp: tuple[int, int]):
        self.db, self.experiment, self.filters, self.stamp = str(db), experiment, filters, stamp
        self._parts: dict = {}
        self._lock = threading.Lock()
        # the dashboard never migrates or writes implicitly: `make run` migrated already
        counts = self._store().outcome_counts(experiment, filters)
        self.outcomes: Outcomes = to_outcomes(counts)  # UserError when nothing is judged yet

    @classmethod
    def build(cls, db: str | Path, experiment: str, filters: SampleFilter = EVERY_SAMPLE) -> ExperimentView:
        return cls(db, experiment, filters, stamp(db, experiment))

    def _store(self) -> Store:
        return Store(self.db, migrate=False)

    def _part(self, key: tuple, make: Callable):
        with self._lock:
            if key in self._parts:
                return self._parts[key]
        value = make()  # outside the lock: two sessions may both compute a part, never block on it
        with self._lock:
            return self._parts.setdefault(key, value)

    @property
    def samples(self) -> int:
        return int(self.outcomes.n.sum())

    def provenance(self, solved_at: float, averaging: str):
        """How this view's numbers are made, with the page's rules (backend/analysis/provenance.py)."""
        from backend.analysis.provenance import from_store

        choices = asdict(self.filters) | {"solved_at": solved_at, "averaging": averaging}
        return self._part(
            ("provenance", solved_at, averaging), lambda: from_store(self._store(), self.experiment, **choices)
        )

    def frontier(self, averaging: str = "per_problem") -> pl.DataFrame:
        return self._part(("frontier", averaging), lambda: frontier_table(self.outcomes, averaging))

    def tiers(self) -> pl.DataFrame:
        """Optimization failures by first failing tier (a second query, over the same rows)."""
        return self._part(
            ("tiers",), lambda: optimization_by_tier(self._store().optimization_tiers(self.experiment, self.filters))
        )

    def pools(self) -> dict[str, list[str]]:
        """The standard pools (all interpolated, + extrapolated) and the greedy one (max pass@max, on
        the problems every one of the sweep's checkpoints has samples of). The best single is no
        fixed pool: the gain table chooses it at each k, held out (held_out_best)."""

        def make():
            o = self.outcomes
            own = merged(o)
            kept, _ = sampled_problems(o, own, 1)
            return {**standard_pools(o), GREEDY: greedy_pool(kept, sampled_kmax(kept, own))}

        return dict(self._part(("pools",), make))

    def held_out_best(self, pools: Pools) -> pl.DataFrame:
        """The best single's pass@k curve as the gain table reports it (chosen at each k on one half
        of the samples, scored on the other), shaped like bands() for the pass@k figure."""
        best = self.gains(pools).filter(pl.col("pool") == BEST)
        return best.select(pl.lit(HELD_OUT_BEST).alias("label"), "k", "pass_at_k", "lo", "hi", "members", "n_problems")

    def sandbox_errors(self) -> pl.DataFrame:
        """Per checkpoint, the samples whose verdict is a sandbox error: in no count above (Store.sandbox_errors)."""
        return self._part(("sandbox_errors",), lambda: self._store().sandbox_errors(self.experiment, self.filters))

    def bands(self, pools: Pools) -> pl.DataFrame:
        """Mean pass@k with 95% CI bands over problems per named pool (one member: a checkpoint)."""
        return self._part(("bands", pools), lambda: pool_bands(self.outcomes, {n: list(m) for n, m in pools}))

    def gains(self, pools: Pools) -> pl.DataFrame:
        """Gains over the best single at every k (its `baseline` column names it); the greedy pool is
        chosen again on each half (analysis.ensembles.gain_table)."""
        fixed = {n: list(m) for n, m in pools if n != GREEDY}
        return self._part(("gains", pools), lambda: gain_table(self.outcomes, fixed, greedy=True))

    def order(self, method: str = "difficulty") -> list[str]:
        return self._part(("order", method), lambda: order_problems(self.outcomes, method))

    def churn(self, solved_at: float) -> dict:
        return self._part(("churn", solved_at), lambda: churn_stats(self.outcomes, solved_at))

    def flipping(self, solved_at: float) -> list[dict]:
        return self._part(("flipping", solved_at), lambda: flipping_problems(self.outcomes, solved_at))

    def findings(self) -> list[dict]:
        """The four findings (backend/analysis/findings.py) on this view's outcomes."""
        from backend.analysis.findings import findings as compute

        return self._part(("findings",), lambda: compute(self.outcomes))

    def format_causes(self, averaging: str = "per_problem") -> pl.DataFrame:
        """Format failures by cause and completion length per checkpoint, labelled, in the view's order."""

        def make():
            o = self.outcomes
            causes = format_causes(self._store().format_causes(self.experiment, self.filters), averaging)
            order = pl.DataFrame({"checkpoint_id": o.checkpoints, "label": o.labels, "alpha": o.alphas})
            return order.join(causes, on="checkpoint_id", how="left").drop("checkpoint_id")

        return self._part(("format_causes", averaging), make)

    def recovery(self) -> list[dict]:
        """Each independent checkpoint's distance to the interpolation curve (analysis/recovery.py)."""
        from backend.analysis.recovery import recovery

        return self._part(("recovery",), lambda: recovery(self.outcomes))

    def checkpoints(self, k: int) -> pl.DataFrame:
        """The checkpoint table with significance tiers at pass@k (backend/analysis/checkpoints.py)."""
        from backend.analysis.checkpoints import checkpoint_table

        return self._part(("checkpoints", k), lambda: checkpoint_table(self.outcomes, k))

    def trend(self) -> dict:
        """The failure shares' slopes along α with simultaneous bands (analysis/trend.py)."""
        from backend.analysis.trend import trend

        return self._part(("trend",), lambda: trend(self.outcomes))


def stamp(db: str | Path, experiment: str) -> tuple[int, int]:
    return Store(db, migrate=False).experiment_stamp(experiment)
