"""The checkpoint table: one row per checkpoint of an experiment (α points, endpoints, independent
checkpoints), to cite in a paper: its problems and samples, pass@1 and pass@k (the unbiased
estimator) with CIs over problems, the four outcome shares with CIs, pass@1 per difficulty, and its
significance tier (backend/analysis/tiers.py). Pure functions of `Outcomes`.

Every CI is the interval over problems the Frontier table uses (backend/analysis/intervals.py:
Student's t widened for skewness, in closed form), so the pass@1 and the shares here are the
Frontier page's numbers to the digit; pass@k is averaged over the problems where the checkpoint has
at least k samples, with the same interval over those problems.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from backend.alpha import alpha_text
from backend.analysis.frame import Outcomes
from backend.analysis.frontier import frontier_table
from backend.analysis.intervals import values_ci
from backend.analysis.passk import pass_at_k
from backend.analysis.tiers import LEVEL, tiers
from backend.errors import UserError
from backend.outcomes import OUTCOME_CLASSES
from backend.vocab import DIFFICULTIES


def largest_k(o: Outcomes) -> int:
    """The largest k any checkpoint can be scored at: the most samples a cell holds."""
    return int(o.n.max()) if o.n.size else 0


DEFAULT_K = 10


def default_k(o: Outcomes) -> int:
    """pass@10, or pass@n where a cell holds fewer than 10 samples at most."""
    return max(1, min(DEFAULT_K, largest_k(o)))


def checkpoint_table(o: Outcomes, k: int = DEFAULT_K, level: float = LEVEL) -> pl.DataFrame:
    """One row per checkpoint, ordered by tier, then pass@1 (best first). See the module."""
    if not 1 <= k <= largest_k(o):
        raise UserError(f"pass@{k} needs {k} samples of a problem; this experiment has at most {largest_k(o)}")
    frontier = frontier_table(o, "per_problem")
    has = o.n > 0
    rates = np.where(has, o.correct / np.maximum(o.n, 1), np.nan)  # a problem's pass@1, per checkpoint
    t = tiers(rates, level)
    scored = o.n >= k
    point, lo, hi = values_ci(np.where(scored, _pass_at_k(o, k), 0.0), scored)
    lo, hi = np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)
    rows = {
        "checkpoint_id": o.checkpoints,
        "label": o.labels,
        "alpha": o.alphas,
        "point_kind": o.kinds,
        "tier": t.tier.tolist(),
        "tier_p": t.p.tolist(),
        "tier_against": [o.labels[j] if j >= 0 else None for j in t.against],
        "problems": has.sum(axis=0).tolist(),
        "samples": o.n.sum(axis=0).tolist(),
        "pass_at_1": frontier["solve_rate"].to_list(),
        "pass_at_1_lo": frontier["solve_rate_lo"].to_list(),
        "pass_at_1_hi": frontier["solve_rate_hi"].to_list(),
        "k": [k] * len(o.checkpoints),
        "pass_at_k": point.tolist(),
        "pass_at_k_lo": lo.tolist(),
        "pass_at_k_hi": hi.tolist(),
        "pass_at_k_problems": scored.sum(axis=0).tolist(),
    }
    for cls in OUTCOME_CLASSES:
        for suffix in ("", "_lo", "_hi"):
            rows[f"{cls}{suffix}"] = frontier[f"{cls}{suffix}"].to_list()
    for difficulty in [d for d in DIFFICULTIES if d in o.difficulty]:
        mine = np.array([d == difficulty for d in o.difficulty])[:, None] & has
        with np.errstate(invalid="ignore", divide="ignore"):
            rows[f"pass_at_1_{difficulty}"] = (np.where(mine, rates, 0.0).sum(axis=0) / mine.sum(axis=0)).tolist()
    table = pl.DataFrame(rows, strict=False)
    return table.sort(["tier", "pass_at_1"], descending=[False, True], nulls_last=True)


def _pass_at_k(o: Outcomes, k: int) -> np.ndarray:
    """problems × checkpoints unbiased pass@k; NaN where a cell has fewer than k samples."""
    out = np.full(o.n.shape, np.nan)
    for c in range(len(o.checkpoints)):
        ok = o.n[:, c] >= k
        if ok.any():
            out[ok, c] = pass_at_k(o.n[ok, c], o.correct[ok, c], k)
    return out


def tier_words(level: float = LEVEL) -> str:
    """What a tier means, for captions and the LaTeX table's note."""
    return (
        "Tier 1: no other checkpoint is shown to beat it; tier 2: none of the rest is, and so on (one-sided paired "
        f"t-tests of pass@1 over problems, Holm-corrected across the checkpoints, family-wise {level:.0%})"
    )


LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                 "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                 "α": r"$\alpha$", "θ": r"$\theta$", "→": r"$\to$", "−": r"$-$"}  # fmt: skip


def latex_escape(text: str) -> str:
    return "".join(LATEX_SPECIAL.get(ch, ch) for ch in text)


def to_latex(table: pl.DataFrame, comments: list[str] = ()) -> str:
    """The table as a LaTeX booktabs tabular (\\usepackage{booktabs}): checkpoint, α, tier, problems,
    pass@1 and pass@k with their 95 % CIs, and the three failure shares (the correct share is pass@1);
    `comments` (the provenance) as % lines above it."""
    k = int(table["k"][0]) if len(table) else 1

    def ci(row: dict, name: str) -> str:
        if row[name] is None or row[name] != row[name]:
            return "--"
        return f"{row[name]:.3f} [{row[f'{name}_lo']:.3f}, {row[f'{name}_hi']:.3f}]"

    head = ["Checkpoint", r"$\alpha$", "Tier", "Problems", "pass@1 [95\\% CI]", f"pass@{k} [95\\% CI]"]
    head += ["Optimization f.", "Correctness f.", "Format f."]
    lines = [f"% {line}" for line in comments]
    lines += [r"\begin{tabular}{lrrr" + "l" * 5 + "}", r"\toprule", " & ".join(head) + r" \\", r"\midrule"]
    for row in table.iter_rows(named=True):
        alpha = "--" if row["alpha"] is None else alpha_text(row["alpha"])
        cells = [latex_escape(str(row["label"])), alpha, str(row["tier"]), str(row["problems"])]
        cells += [ci(row, "pass_at_1"), ci(row, "pass_at_k")] + [ci(row, cls) for cls in OUTCOME_CLASSES[1:]]
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", f"% {tier_words()}."]
    return "\n".join(lines) + "\n"
