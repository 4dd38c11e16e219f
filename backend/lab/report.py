"""Does each of the paper's four findings show in a sweep? Pure functions of `Outcomes`, with
paired bootstrap CIs over problems (every comparison resamples the same problems for both sides).

A finding "shows" only when its criterion holds with the CI excluding zero; otherwise the report
says it does not, with the numbers. The criteria are stated next to each verdict.
"""

from __future__ import annotations

import numpy as np

from backend.analysis.churn import churn_stats, solved_sets
from backend.analysis.ensembles import gain_table, standard_pools
from backend.analysis.frame import SOLVED_AT, Outcomes, bootstrap_weights, percentile_ci

REPLICATES = 2000


def _fractions(o: Outcomes, cls: str, W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-problem-averaged class fraction per checkpoint: point[c] and bootstrap replicates[b, c]."""
    count = o.correct if cls == "correct" else o.counts[cls]
    has = o.n > 0
    frac = np.where(has, count / np.maximum(o.n, 1), 0.0)
    point = frac.sum(axis=0) / np.maximum(has.sum(axis=0), 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        reps = (W @ frac) / (W @ has)
    return point, reps


def _diff(point: np.ndarray, reps: np.ndarray, a: int, b: int) -> dict:
    lo, hi = percentile_ci(reps[:, a] - reps[:, b])
    return {"value": float(point[a] - point[b]), "lo": float(lo), "hi": float(hi)}


def _share(opt: np.ndarray, corr: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return opt / (opt + corr)


def _index(o: Outcomes, alpha: float) -> int | None:
    hits = [i for i, a in enumerate(o.alphas) if a is not None and abs(a - alpha) < 1e-9]
    return hits[0] if hits else None


def _positive(d: dict) -> bool:
    return d["lo"] > 0


def findings(o: Outcomes, seed: int = 0) -> list[dict]:
    """The four findings, each {finding, shows, criterion, numbers}."""
    W = bootstrap_weights(len(o.problems), REPLICATES, seed)
    low, high = _index(o, 0.0), _index(o, 1.0)
    if low is None or high is None:
        raise ValueError("the report needs the endpoints α = 0 and α = 1 in the sweep")
    opt, opt_r = _fractions(o, "optimization_failure", W)
    corr, corr_r = _fractions(o, "correctness_failure", W)
    solve, solve_r = _fractions(o, "correct", W)
    share, share_r = _share(opt, corr), _share(opt_r, corr_r)
    return [
        _frontier(o, low, high, opt, opt_r, corr, corr_r, solve, solve_r),
        _extrapolation(o, low, high, share, share_r),
        _churn(o, W),
        _ensemble(o, seed),
    ]


def _frontier(o, low, high, opt, opt_r, corr, corr_r, solve, solve_r) -> dict:
    d_opt = _diff(opt, opt_r, low, high)  # the low-coverage end fails more by being slow
    d_corr = _diff(corr, corr_r, high, low)  # the high-coverage end fails more by being wrong
    d_solve = _diff(solve, solve_r, high, low)
    inside = [i for i, a in enumerate(o.alphas) if a is not None and 0.0 <= a <= 1.0]
    spread = float(solve[inside].max() - solve[inside].min())
    flat = d_solve["lo"] <= 0 <= d_solve["hi"] or abs(d_solve["value"]) <= 0.05
    return {
        "finding": "1. frontier with a flat solve rate",
        "shows": _positive(d_opt) and _positive(d_corr) and flat,
        "criterion": "α=0 has more optimization failures and α=1 more correctness failures (CIs > 0), and the "
        "solve-rate difference between them has a CI containing 0 or is within 5 points",
        "numbers": {"opt_fail(α=0) − opt_fail(α=1)": d_opt, "corr_fail(α=1) − corr_fail(α=0)": d_corr,
                    "solve(α=1) − solve(α=0)": d_solve, "solve-rate spread over α∈[0,1]": spread},
    }  # fmt: skip


def _extrapolation(o, low, high, share, share_r) -> dict:
    """The optimization share of failures keeps rising below α=0 and keeps falling above α=1."""
    below = [i for i, a in enumerate(o.alphas) if a is not None and a < 0]
    above = [i for i, a in enumerate(o.alphas) if a is not None and a > 1]
    below_i = next((i for i in [_index(o, -0.5), *below[::-1]] if i is not None), None)  # α=-0.5, else the nearest
    above_i = next((i for i in [_index(o, 1.5), *above] if i is not None), None)  # α=1.5, else the nearest
    numbers, sides = {}, []
    if below_i is not None:
        d = _diff(share, share_r, below_i, low)
        numbers[f"opt_share(α={o.alphas[below_i]:g}) − opt_share(α=0)"] = d
        sides.append(_positive(d))
    if above_i is not None:
        d = _diff(share, share_r, high, above_i)
        numbers[f"opt_share(α=1) − opt_share(α={o.alphas[above_i]:g})"] = d
        sides.append(_positive(d))
    return {
        "finding": "2. extrapolation beyond both endpoints",
        "shows": len(sides) == 2 and all(sides),
        "criterion": "the optimization-failure share of failures moves further in the same direction past both "
        "endpoints (both CIs > 0)",
        "numbers": numbers,
    }


def _churn(o: Outcomes, W: np.ndarray) -> dict:
    axis = o.select([c for c, a in zip(o.checkpoints, o.alphas, strict=True) if a is not None])
    stats = churn_stats(axis)
    solved = solved_sets(axis)
    best = int(np.argmax(solved.sum(axis=0)))
    extra = (solved.any(axis=1) & ~solved[:, best]).astype(float)  # solved somewhere on the axis, not by the best
    lo, hi = percentile_ci(W @ extra)
    d = {"value": float(extra.sum()), "lo": float(lo), "hi": float(hi)}
    return {
        "finding": "3. per-problem churn",
        "shows": _positive(d) and stats["total_flips"] > 0,
        "criterion": f"problems solved (≥ {SOLVED_AT:.0%} of samples correct) at some α but not by the best single α "
        "(CI > 0)",
        "numbers": {"union − best single (problems)": d, "flips between neighbouring α": stats["total_flips"],
                    "union solved": stats["union_solved"], "best single": stats["best_single"]["label"],
                    "best single solved": stats["best_single"]["solved"]},
    }  # fmt: skip


def _ensemble(o: Outcomes, seed: int) -> dict:
    axis = o.select([c for c, a in zip(o.checkpoints, o.alphas, strict=True) if a is not None])
    k = int(axis.n.min())
    pools = standard_pools(axis, k)
    rows = [r for r in gain_table(axis, pools, replicates=REPLICATES, seed=seed).to_dicts() if r["k"] == k]
    best = {r["pool"]: r for r in rows}
    pool = "interpolated + extrapolated" if "interpolated + extrapolated" in best else "all interpolated"
    r = best[pool]
    d = {"value": r["gain"], "lo": r["gain_lo"], "hi": r["gain_hi"]}
    return {
        "finding": "4. ensemble gain at a matched budget",
        "shows": _positive(d),
        "criterion": f"pass@{k} of the pool '{pool}' ({r['members']} checkpoints, ⌊k/M⌋ samples each, the remainder to random members) beats the best "
        f"single checkpoint's pass@{k} (CI > 0)",
        "numbers": {f"pass@{k} gain": d, f"pool pass@{k}": r["pass_at_k"], f"best single pass@{k}": best["best single"]["pass_at_k"]},
    }  # fmt: skip


def to_markdown(rows: list[dict]) -> str:
    lines = ["| finding | shows here? | numbers (95% bootstrap CI over problems) |", "|---|---|---|"]
    for r in rows:
        nums = "; ".join(f"{k}: {_fmt(v)}" for k, v in r["numbers"].items())
        lines.append(f"| {r['finding']} | {'yes' if r['shows'] else '**no**'} | {nums} |")
    lines.append("")
    lines += [f"- {r['finding']}: shows when {r['criterion']}." for r in rows]
    return "\n".join(lines)


def _fmt(v) -> str:
    if isinstance(v, dict):
        return f"{v['value']:+.3f} [{v['lo']:+.3f}, {v['hi']:+.3f}]"
    return f"{v:.3f}" if isinstance(v, float) else str(v)


def lab_findings(store, manifest_folder=None) -> tuple[str | None, list[dict] | None]:
    """(the lab's sweep experiment, its findings) when the lab is in this database, else (None, None)."""
    import json

    from backend.analysis.frame import to_outcomes
    from backend.lab.artifacts import ARTIFACTS

    manifest = (manifest_folder or ARTIFACTS) / "recipe.json"
    if not manifest.is_file():
        return None, None
    experiment = json.loads(manifest.read_text())["sweep_experiment"]
    counts = store.outcome_counts(experiment)
    if counts.is_empty():
        return None, None
    return experiment, findings(to_outcomes(counts))
