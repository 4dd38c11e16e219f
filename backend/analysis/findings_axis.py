"""F3 and F4 of the paper's four findings (backend/analysis/findings.py is the entry point): churn
and ensembles, each chosen on one half of a cell's samples and measured on the other.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import t as student_t

from backend.analysis.churn_excess import NAME as CHURN_NAME
from backend.analysis.churn_excess import churn_excess
from backend.analysis.ensembles import gain_table, merged, short_problems, standard_pools
from backend.analysis.findings_rules import Finding, FindingsSpec, Part, skipped, verdict
from backend.analysis.frame import Outcomes

ENSEMBLE_CLAIM = "a matched-budget pool beats the best single"  # what F4 tests, when it cannot


def check_churn(o: Outcomes, spec: FindingsSpec) -> Finding:
    """F3: more problems solved somewhere on the α axis than by the best single α, beyond noise:
    the churn excess (churn_excess.churn_excess, the one estimator the Churn page shows too), its
    CI over problems and the status that CI decides."""
    e = churn_excess(o, spec.solved_at, spec.ci_level, spec.splits, spec.min_effect, spec.seed)
    if e.status == "not_tested":
        return skipped("churn", e.criterion, e.reason, e.excluded)
    part = Part(f"{CHURN_NAME}, against {e.against}", e.status, e.estimate, e.lo, e.hi, e.criterion)
    return Finding("churn", e.status, e.estimate, e.lo, e.hi, e.criterion, [part], excluded_problems=e.excluded)


def check_ensemble(o: Outcomes, spec: FindingsSpec) -> Finding:
    """F4: the gain table's own number (ensembles.gain_table), one row of it: a matched-budget pool
    along the extended frontier (interpolated + extrapolated, else all interpolated) against the
    best single at pass@k, the best chosen per k and cross-fitted, its CI choosing again in every
    bootstrap replicate. k is spec.ensemble_k, fixed before the counts are seen: a problem whose
    cells cannot support it is left out and listed (`excluded_problems`), k is never lowered."""
    name, members = list(standard_pools(o).items())[-1]
    k, pooled = spec.ensemble_k, list(dict.fromkeys([*merged(o), *members]))
    need = 2 * (k + 1)  # scored on one half of a cell's samples, k stays below that half (ensembles.gain_kmax)
    excluded = [
        e | {"reason": e["reason"] + f": pass@{k} cross-fitted needs {need} per cell ({k + 1} in each half)"}
        for e in short_problems(o, pooled, need)
    ]
    claim = f"{ENSEMBLE_CLAIM} at pass@{k}"
    if len(excluded) == len(o.problems):
        why = f"no problem has {need} judged samples of every pooled checkpoint, which pass@{k} cross-fitted needs"
        return skipped("ensemble", claim, f"{why}; sample more or name a smaller k (--ensemble-k)", excluded)
    kept = o.on_problems(np.array([p not in {e["problem_id"] for e in excluded} for p in o.problems]))
    table = gain_table(kept, {name: members}, seed=spec.seed, ks=[k], level=spec.ci_level)
    row = next(r for r in table.to_dicts() if r["pool"] == name)
    criterion = (
        f"pass@{k} of a matched-budget pool of {name} ({len(members)} members), minus the best single's pass@{k}; "
        f"the best single chosen at k = {k} on one half of the samples and scored with the pool on the other "
        f"(the gain table's row at k = {k}, `analyze ensembles`)"
    )
    part = gain_part(f"pool ({name}) − best single at pass@{k}", row, spec, criterion)
    n = int(np.median(kept.n[:, [kept.checkpoints.index(c) for c in pooled]]))
    return Finding(
        "ensemble",
        part.status,
        part.statistic,
        part.ci_low,
        part.ci_high,
        part.criterion,
        [part],
        excluded_problems=excluded,
        power=ensemble_power(row, spec, len(kept.problems), n, k),
    )


def ensemble_power(row: dict, spec: FindingsSpec, problems: int, n: int, k: int, target: float = 0.8) -> dict:
    """F4's power at this size to show the gain it needs (min_effect), from its own CI: with se the
    CI's half-width over t, the chance that a true gain of min_effect gives a lower bound above 0,
    1 − F_t(t_crit − min_effect/se). And the samples per cell that would give `target` power if the
    standard error shrinks as 1/√n (sampling noise dominating, as in a sweep of alike checkpoints;
    where problems' gains differ, more)."""
    df = max(problems - 1, 1)
    crit = float(student_t.ppf(0.5 + spec.ci_level / 2, df))
    se = (row["gain_hi"] - row["gain_lo"]) / (2 * crit)
    if not se > 0:
        return {"effect": spec.min_effect, "k": k, "n": n, "problems": problems, "power": None, "n_for_80": None}
    power = float(1 - student_t.cdf(crit - spec.min_effect / se, df))
    scale = ((crit + float(student_t.ppf(target, df))) * se / spec.min_effect) ** 2
    n_needed = max(n, 2 * math.ceil(n * scale / 2))
    return {"effect": spec.min_effect, "k": k, "n": n, "problems": problems, "power": power, "n_for_80": n_needed}


def gain_part(name: str, row: dict, spec: FindingsSpec, criterion: str) -> Part:
    """A gain table row as a "greater than 0" part: its own estimate and CI (centred on the
    cross-fitted estimate), the status by the one rule."""
    lo, hi = float(row["gain_lo"]), float(row["gain_hi"])
    status = verdict(lo > 0, lo, hi, (spec.min_effect, np.inf))
    return Part(name, status, float(row["gain"]), lo, hi, f"{criterion}: {spec.ci_level:.0%} CI lower bound > 0")
