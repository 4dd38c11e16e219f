"""One read model per (database, experiment, filters): everything the pages, the downloads and the
export zip show of one experiment, computed from one snapshot of its outcomes.

Before, each page part had its own cache with its own expiry (the frontier table none at all), so
a running sweep's caption moved on while its charts stayed at the first α point. Here every part
hangs off one `ExperimentView`, built for one `stamp` of the experiment's evaluations (row count
and a fingerprint, one cheap query): a new row makes a new view, an unchanged experiment keeps its
view. The rules (averaging, solved threshold, row order, pools) pick memoized parts of the view.
No Streamlit here: dashboard/data.py caches views, bench/ builds them directly.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from backend.analysis.churn import churn_stats, flipping_problems, order_problems
from backend.analysis.ensembles import gain_table, greedy_pool, merged, pool_bands, pool_curve, standard_pools
from backend.analysis.frame import Outcomes, to_outcomes
from backend.analysis.frontier import format_causes, frontier_table, optimization_by_tier
from backend.store import Store

Pools = tuple[tuple[str, tuple[str, ...]], ...]  # (name, members) pairs: hashable, in the page's order
GREEDY = "greedy (max pass@max)"
BEST = "best single"


@dataclass(frozen=True)
class Filters:
    """Which of an experiment's samples a view counts (None: all)."""

    difficulty: str | None = None
    platform: str | None = None
    setting: str | None = None
    # not a filter of rows but a rule of counting (AnalysisSpec.opt_min_tier): a time or memory
    # failure first failing below this tier counts as a correctness failure; only the Frontier sets it
    opt_min_tier: int | None = None

    def rows(self) -> dict:
        """The row filters alone, for the queries that count by verdict or cause, not by class."""
        return {"difficulty": self.difficulty, "platform": self.platform, "setting": self.setting}


class ExperimentView:
    """An experiment's outcomes under some filters, and every table derived from them (each part
    computed on first use and kept for the life of the view)."""

    def __init__(self, db: str | Path, experiment: str, filters: Filters, stamp: tuple[int, int]):
        self.db, self.experiment, self.filters, self.stamp = str(db), experiment, filters, stamp
        self._parts: dict = {}
        self._lock = threading.Lock()
        # the dashboard never migrates or writes implicitly: `make run` migrated already
        counts = self._store().outcome_counts(experiment, **vars(filters))
        self.outcomes: Outcomes = to_outcomes(counts)  # UserError when nothing is judged yet

    @classmethod
    def build(cls, db: str | Path, experiment: str, filters: Filters = Filters()) -> ExperimentView:
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

        f = self.filters
        return self._part(("provenance", solved_at, averaging), lambda: from_store(
            self._store(), self.experiment, **f.rows(), opt_min_tier=f.opt_min_tier, solved_at=solved_at,
            averaging=averaging))  # fmt: skip

    def frontier(self, averaging: str = "per_problem") -> pl.DataFrame:
        return self._part(("frontier", averaging), lambda: frontier_table(self.outcomes, averaging))

    def tiers(self) -> pl.DataFrame:
        """Optimization failures by first failing tier (a second query, over the same rows)."""
        return self._part(("tiers",), lambda: optimization_by_tier(
            self._store().optimization_tiers(self.experiment, **self.filters.rows())))  # fmt: skip

    def pools(self) -> dict[str, list[str]]:
        """The best single at pass@max, the standard pools (all interpolated, + extrapolated) and the
        greedy one (max pass@max), all of the sweep's own checkpoints."""

        def make():
            o = self.outcomes
            own = merged(o)
            kmax = int(o.n[:, [o.checkpoints.index(c) for c in own]].min())
            best = max(own, key=lambda c: pool_curve(o, [c], [kmax]).mean())
            return {BEST: [best], **standard_pools(o), GREEDY: greedy_pool(o, kmax)}

        return dict(self._part(("pools",), make))

    def bands(self, pools: Pools) -> pl.DataFrame:
        """Mean pass@k with 95% CI bands over problems per named pool (one member: a checkpoint)."""
        return self._part(("bands", pools), lambda: pool_bands(self.outcomes, {n: list(m) for n, m in pools}))

    def gains(self, pools: Pools) -> pl.DataFrame:
        """Gains over the best single at every k (its `baseline` column names it); the greedy pool is
        chosen again on each half (analysis.ensembles.gain_table)."""
        fixed = {n: list(m) for n, m in pools if n not in (GREEDY, BEST)}
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
            causes = format_causes(self._store().format_causes(self.experiment, **self.filters.rows()), averaging)
            order = pl.DataFrame({"checkpoint_id": o.checkpoints, "label": o.labels, "alpha": o.alphas})
            return order.join(causes, on="checkpoint_id", how="left").drop("checkpoint_id")

        return self._part(("format_causes", averaging), make)

    def recovery(self) -> list[dict]:
        """Each independent checkpoint's distance to the interpolation curve (analysis/recovery.py)."""
        from backend.analysis.recovery import recovery

        return self._part(("recovery",), lambda: recovery(self.outcomes))

    def trend(self) -> dict:
        """The failure shares' slopes along α with simultaneous bands (analysis/trend.py)."""
        from backend.analysis.trend import trend

        return self._part(("trend",), lambda: trend(self.outcomes))


def stamp(db: str | Path, experiment: str) -> tuple[int, int]:
    return Store(db, migrate=False).experiment_stamp(experiment)
