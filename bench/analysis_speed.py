"""Analysis speed at the design scale: 20 checkpoints × 1,000 problems × 250 samples = 5 M judged
samples in DuckDB. The data is SYNTHETIC (random outcomes), fit for timing only.

Ours (from the DuckDB file): the outcome-count query, the frontier table with its CIs over problems, the
churn matrix and statistics, pass@k for k = 1…250 with CIs, and 10 matched-budget ensemble pools.
Baseline (same run, from an in-memory pandas frame, so its load time is not even counted):
a straightforward pandas groupby/apply of the same numbers.

    .venv/bin/python bench/analysis_speed.py [--db /tmp/flab-analysis-bench.duckdb]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.alpha import alpha_label
from backend.analysis.churn import churn_stats, solve_matrix
from backend.analysis.ensembles import gain_table, passk_per_checkpoint
from backend.analysis.frame import to_outcomes
from backend.analysis.frontier import frontier_table
from backend.outcomes import OUTCOME_CLASSES, OutcomeClass
from backend.records import Checkpoint, Evaluation, Experiment, Problem
from backend.store import Store

# The design scale; --smoke shrinks problems and samples so that CI runs the script's every step in
# seconds (its figures then time nothing worth reporting).
FULL, SMOKE = (20, 1000, 250), (20, 60, 20)
CKPTS, PROBLEMS, SAMPLES = FULL
CLASSES = np.array(OUTCOME_CLASSES)
EXP = "synthetic-bench"


def build(store: Store) -> list[float]:
    alphas = list(np.round(np.linspace(-1.0, 2.0, CKPTS), 3))
    store.put([Experiment(id=EXP, kind="sweep", name="synthetic benchmark data", note="SYNTHETIC: timing only")])
    store.put(
        [
            Checkpoint(id=f"c{i:02d}", path="-", kind="merged", alpha=float(a), label=alpha_label(a))
            for i, a in enumerate(alphas)
        ]
    )
    store.put(
        [
            Problem(
                id=f"syn/p{p:04d}",
                bench="syn",
                title=f"p{p}",
                statement="-",
                difficulty=("easy", "medium", "hard")[p % 3],
            )
            for p in range(PROBLEMS)
        ]
    )
    rng = np.random.default_rng(0)
    for i, a in enumerate(alphas):
        skill = rng.beta(1.2, 2.0, PROBLEMS)[:, None]
        u = rng.random((PROBLEMS, SAMPLES))
        opt_share = np.clip(0.7 - 0.3 * a, 0.05, 0.95)
        outcome = np.where(
            u < skill, 0, np.where(u < skill + (1 - skill) * 0.9 * opt_share, 1, np.where(u < 0.97, 2, 3))
        )
        store.put_arrow(
            Evaluation,
            pa.table(
                {
                    "experiment_id": pa.array([EXP] * PROBLEMS * SAMPLES),
                    "checkpoint_id": pa.array([f"c{i:02d}"] * PROBLEMS * SAMPLES),
                    "problem_id": pa.array(np.repeat([f"syn/p{p:04d}" for p in range(PROBLEMS)], SAMPLES)),
                    "sample_idx": pa.array(np.tile(np.arange(SAMPLES, dtype=np.int32), PROBLEMS)),
                    "outcome": pa.array(CLASSES[outcome.ravel()]),
                }
            ),
        )
    return alphas


def ours(store: Store) -> dict[str, float]:
    t = {}
    start = time.perf_counter()
    counts = store.outcome_counts(EXP)
    o = to_outcomes(counts)
    t["query + arrays"] = time.perf_counter() - start
    mark = time.perf_counter()
    frontier_table(o)
    t["frontier table (+CIs)"] = time.perf_counter() - mark
    mark = time.perf_counter()
    solve_matrix(o)
    churn_stats(o)
    t["churn matrix + statistics"] = time.perf_counter() - mark
    mark = time.perf_counter()
    passk_per_checkpoint(o, SAMPLES)
    t[f"pass@k, k=1..{SAMPLES} (+CIs)"] = time.perf_counter() - mark
    mark = time.perf_counter()
    cks = o.checkpoints
    pools = {"all": cks, **{f"window {i}": cks[i : i + 5] for i in range(0, 16, 2)}}
    gain_table(o, pools)
    t["9 ensemble pools + best single per k (cross-fitted gains +CIs)"] = time.perf_counter() - mark
    t["total"] = time.perf_counter() - start
    return t


def baseline(df: pd.DataFrame) -> dict[str, float]:
    """What one writes without thinking about it: groupby/apply over the 5 M rows."""
    t = {}
    start = time.perf_counter()
    per = df.groupby(["checkpoint_id", "problem_id"])["outcome"].value_counts(normalize=True).unstack(fill_value=0)
    per.groupby(level="checkpoint_id").mean()
    t["frontier table (no CIs)"] = time.perf_counter() - start
    mark = time.perf_counter()
    df.assign(ok=df["outcome"] == OutcomeClass.CORRECT).groupby(["problem_id", "checkpoint_id"])["ok"].mean().unstack()
    t["churn matrix"] = time.perf_counter() - mark
    mark = time.perf_counter()
    nc = (
        df.assign(ok=df["outcome"] == OutcomeClass.CORRECT)
        .groupby(["checkpoint_id", "problem_id"])["ok"]
        .agg(["size", "sum"])
    )

    def curve(row):
        n, c = int(row["size"]), int(row["sum"])
        return pd.Series([1 - math.comb(n - c, k) / math.comb(n, k) for k in range(1, SAMPLES + 1)])

    curves = nc.apply(curve, axis=1)
    curves.groupby(level="checkpoint_id").mean()
    t[f"pass@k, k=1..{SAMPLES} (no CIs)"] = time.perf_counter() - mark
    mark = time.perf_counter()
    cks = sorted(df["checkpoint_id"].unique())
    pools = [[cks[10]], cks, *[cks[i : i + 5] for i in range(0, 16, 2)]]
    table = nc.unstack(level="checkpoint_id")
    for members in pools:
        for k in (k for k in (1, 10, 100, 250) if k <= SAMPLES):
            shares = [k // len(members) + (1 if m < k % len(members) else 0) for m in range(len(members))]

            def pool_pass(row, members=members, shares=shares):
                miss = 1.0
                for m, km in zip(members, shares, strict=True):
                    n, c = int(row[("size", m)]), int(row[("sum", m)])
                    miss *= math.comb(n - c, km) / math.comb(n, km)
                return 1 - miss

            table.apply(pool_pass, axis=1).mean()
    t["10 ensemble pools (no CIs)"] = time.perf_counter() - mark
    t["total"] = time.perf_counter() - start
    return t


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", default="/tmp/flab-analysis-bench.duckdb")
    parser.add_argument(
        "--smoke", action="store_true", help="60 problems x 20 samples: checks the script, times nothing"
    )
    args = parser.parse_args()
    global CKPTS, PROBLEMS, SAMPLES
    CKPTS, PROBLEMS, SAMPLES = SMOKE if args.smoke else FULL
    path = Path(args.db)
    if not path.exists():
        print(f"building {CKPTS * PROBLEMS * SAMPLES:,} synthetic samples in {path} ...", flush=True)
        build(Store(path))
    store = Store(path)
    ours(store)  # warm: page cache, imports
    mine = ours(store)
    with store.connect(read_only=True) as con:
        df = con.sql(f"SELECT checkpoint_id, problem_id, outcome FROM evaluations WHERE experiment_id = '{EXP}'").df()
    theirs = baseline(df)
    print(f"SYNTHETIC data: {CKPTS} checkpoints x {PROBLEMS} problems x {SAMPLES} samples = {len(df):,} rows")
    for name, sec in mine.items():
        print(f"  ours      {name:<40} {sec * 1000:8.1f} ms")
    for name, sec in theirs.items():
        print(f"  pandas    {name:<40} {sec * 1000:8.1f} ms")
    print(f"  ratio (pandas / ours), total: {theirs['total'] / mine['total']:.1f}x  (targets: ours < 1 s, ratio >= 5x)")


if __name__ == "__main__":
    main()
