"""The findings report against hand-built outcome tables whose answers are known."""

import itertools
from math import comb

import numpy as np
import polars as pl

from backend.analysis.frame import to_outcomes
from backend.lab.report import findings, to_markdown

ALPHAS = [-0.5, 0.0, 0.5, 1.0, 1.5]


def outcomes(cells):
    """cells[(problem, alpha)] = (correct, opt, corr, fmt) out of n = sum."""
    rows = []
    for (p, a), (c, o, w, f) in cells.items():
        rows.append({"checkpoint_id": f"m{a}", "problem_id": f"p{p:02d}", "n": c + o + w + f, "correct": c,
                     "optimization_failure": o, "correctness_failure": w, "format_failure": f, "alpha": a,
                     "kind": "merged", "label": f"α={a:g}", "title": f"P{p}", "difficulty": "hard"})  # fmt: skip
    return to_outcomes(pl.DataFrame(rows))


def frontier_cells(problems=30):
    """Solve rate flat at 1/4; optimization failures fall with α, correctness failures rise. Even
    problems are solved (8/16) only at α <= 0.5, odd ones only above (churn, ensemble gain)."""
    cells = {}
    for p in range(problems):
        for i, a in enumerate(ALPHAS):
            correct = 8 if (p % 2 == 0) == (a <= 0.5) else 0
            failed = 16 - correct
            opt = failed * (8 - 2 * i) // 8
            cells[(p, a)] = (correct, opt, failed - opt, 0)
    return cells


def test_every_finding_shows_on_a_textbook_frontier():
    o = outcomes(frontier_cells())
    rows = findings(o)
    assert [r["shows"] for r in rows] == [True, True, True, True], to_markdown(rows)
    d_opt = rows[0]["numbers"]["opt_fail(α=0) − opt_fail(α=1)"]
    n = o.n[:, 0]
    opt = o.counts["optimization_failure"]
    expected = (opt[:, ALPHAS.index(0.0)] / n).mean() - (opt[:, ALPHAS.index(1.0)] / n).mean()
    assert abs(d_opt["value"] - expected) < 1e-12 and d_opt["lo"] <= d_opt["value"] <= d_opt["hi"]


def test_ensemble_gain_matches_exact_combinatorics():
    o = outcomes(frontier_cells())
    r = findings(o)[3]
    k, members = 16, len(ALPHAS)
    base, extra = divmod(k, members)
    pool = []
    for p in range(len(o.problems)):  # the remainder's placement averaged over every choice of members
        misses = []
        for chosen in itertools.combinations(range(members), extra):
            miss = 1.0
            for c in range(members):
                km, n, good = base + (c in chosen), int(o.n[p, c]), int(o.correct[p, c])
                miss *= comb(n - good, km) / comb(n, km)
            misses.append(miss)
        pool.append(1 - np.mean(misses))
    single = max(np.mean([1 - comb(int(o.n[p, c] - o.correct[p, c]), k) / comb(int(o.n[p, c]), k)
                          for p in range(len(o.problems))]) for c in range(members))  # fmt: skip
    assert abs(r["numbers"][f"pool pass@{k}"] - np.mean(pool)) < 1e-9
    assert abs(r["numbers"][f"best single pass@{k}"] - single) < 1e-9


def test_a_flat_sweep_shows_no_frontier_no_extrapolation_and_no_churn():
    cells = {(p, a): (8, 4, 4, 0) for p in range(20) for a in ALPHAS}
    rows = findings(outcomes(cells))
    assert [r["shows"] for r in rows] == [False, False, False, False]
    assert rows[0]["numbers"]["opt_fail(α=0) − opt_fail(α=1)"]["value"] == 0.0
    assert "**no**" in to_markdown(rows)
