"""The paper's four findings (docs/method.md), checked on any experiment: pure functions of `Outcomes`.

Each finding has a pre-set criterion, a statistic with a CI, and one of four statuses (`verdict`
and `combine`, the rule docs/findings.md writes as one table): shows (the criterion holds),
underpowered (it does not, but the CI still reaches the effect the criterion needs),
does_not_show (the CI rules that effect out) and not_tested (with the reason: e.g. F2 is tested
only where F1's direction holds). docs/findings.md explains each statistic.
"""

from __future__ import annotations

import numpy as np

from backend.alpha import alpha_label, alpha_text
from backend.analysis.ensembles import short_problems
from backend.analysis.findings_axis import check_churn, check_ensemble
from backend.analysis.findings_rules import (
    Finding,
    FindingsSpec,
    Part,
    above_zero,
    combine,
    equivalent,
    non_inferior,
    skipped,
    undefined,
    verdict,
)
from backend.analysis.findings_text import tiny_input_rule
from backend.analysis.frame import Outcomes
from backend.analysis.intervals import Estimate, problem_mean, ratio_influence
from backend.errors import UserError
from backend.outcomes import OutcomeClass

FINDINGS = ("frontier", "extrapolation", "churn", "ensemble")
STATUSES = ("shows", "does_not_show", "underpowered", "not_tested")
# The public entry point: the findings and what their callers build or check them with.
__all__ = [
    "FINDINGS",
    "STATUSES",
    "Finding",
    "FindingsSpec",
    "Part",
    "above_zero",
    "check_churn",
    "check_ensemble",
    "check_extrapolation",
    "check_findings",
    "check_frontier",
    "combine",
    "equivalent",
    "findings",
    "non_inferior",
    "verdict",
]


def findings(o: Outcomes, spec: FindingsSpec | None = None, opt_min_tier: int | None = None) -> list[dict]:
    """The four findings as JSON-ready dicts: what `analyze findings`, the Overview and the lab report print.
    opt_min_tier: the rule `o` was counted with (Store.outcome_counts applies it); every finding states it."""
    rule = {"opt_min_tier": opt_min_tier, "tiny_inputs": tiny_input_rule(opt_min_tier)}
    return [f.to_dict() | rule for f in check_findings(o, spec)]


def check_findings(o: Outcomes, spec: FindingsSpec | None = None) -> list[Finding]:
    """The four findings of one experiment; needs its endpoints α = 0 (θ_low) and α = 1 (θ_high)."""
    spec = spec or FindingsSpec()
    frontier = check_frontier(o, spec)
    return [frontier, check_extrapolation(o, spec, frontier), check_churn(o, spec), check_ensemble(o, spec)]


def _endpoints(o: Outcomes) -> tuple[int, int]:
    low, high = _index(o, 0.0), _index(o, 1.0)
    if low is None or high is None:
        raise UserError("the findings need the endpoints α = 0 and α = 1 in this experiment; sweep both")
    return low, high


# -- F1, F2: class shares at the endpoints and beyond ------------------------------------------


def _index(o: Outcomes, alpha: float) -> int | None:
    hits = [i for i, a in enumerate(o.alphas) if a is not None and abs(a - alpha) < 1e-9]
    return hits[0] if hits else None


def _fraction(o: Outcomes, count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-problem class fraction averaged over the problems judged at each checkpoint: (point[c],
    influence values ψ[p, c]; intervals.problem_mean)."""
    has = o.n > 0
    return problem_mean(np.where(has, count / np.maximum(o.n, 1), 0.0), has)


def _shares(o: Outcomes) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    out = {
        "opt": _fraction(o, o.counts[OutcomeClass.OPTIMIZATION_FAILURE]),
        "corr": _fraction(o, o.counts[OutcomeClass.CORRECTNESS_FAILURE]),
        "solve": _fraction(o, o.correct),
    }
    failures = (out["opt"][0] + out["corr"][0], out["opt"][1] + out["corr"][1])
    out["opt_share"] = ratio_influence(out["opt"], failures)  # no failures at all: undefined, NaN
    return out


def _diff(values: tuple[np.ndarray, np.ndarray], a: int, b: int) -> Estimate:
    """Checkpoint a minus checkpoint b, paired over problems."""
    point, psi = values
    return Estimate(point[a] - point[b], psi[:, a] - psi[:, b])


def check_frontier(o: Outcomes, spec: FindingsSpec) -> Finding:
    """F1: optimization failures fall and correctness failures rise from θ_low to θ_high, at a flat solve rate."""
    low, high = _endpoints(o)
    s = _shares(o)
    parts = [
        above_zero(
            "optimization failures fall from θ_low to θ_high",
            _diff(s["opt"], low, high),
            spec,
            "opt(α=0) − opt(α=1), share of samples",
        ),
        above_zero(
            "correctness failures rise from θ_low to θ_high",
            _diff(s["corr"], high, low),
            spec,
            "corr(α=1) − corr(α=0), share of samples",
        ),
        equivalent("solve rate flat: solve(α=1) − solve(α=0)", _diff(s["solve"], high, low), spec),
    ]
    finding = combine(
        "frontier",
        parts,
        "optimization failures fall and correctness failures rise from α=0 to α=1 "
        f"(each {spec.ci_level:.0%} CI > 0), while the solve rate stays within ±{spec.margin:g} "
        f"({spec.equivalence_level:.0%} CI)",
    )
    finding.excluded_problems = _unsampled(o, [low, high])
    return finding


def _unsampled(o: Outcomes, idx: list[int]) -> list[dict]:
    """Problems some of these checkpoints has no judged sample of: each share leaves them out at that α."""
    return [
        e | {"reason": e["reason"] + ": left out of the shares at that α"}
        for e in short_problems(o, [o.checkpoints[i] for i in idx], 1)
    ]


def check_extrapolation(o: Outcomes, spec: FindingsSpec, f1: Finding | None = None) -> Finding:
    """F2, tested only where F1's direction holds: beyond each endpoint the frontier goes on."""
    low, high = _endpoints(o)
    f1 = f1 or check_frontier(o, spec)
    criterion = (
        "beyond each endpoint the optimization share of failures, opt/(opt+corr), is more extreme than at it "
        f"({spec.ci_level:.0%} CI > 0) and the solve rate there is not worse than that endpoint's by more than "
        f"{spec.margin:g} ({spec.equivalence_level:.0%} CI lower bound > −{spec.margin:g})"
    )
    direction = f1.parts[:2]
    if not all(p.status == "shows" for p in direction):
        failed = "; ".join(f"{p.name}: {p.status.replace('_', ' ')}" for p in direction if p.status != "shows")
        reason = f"F1's direction does not hold here ({failed}), so there is no frontier to extend"
        return skipped("extrapolation", criterion, reason)
    s = _shares(o)
    below = _beyond(o, spec.extrapolation_alphas[0], below=True)
    above = _beyond(o, spec.extrapolation_alphas[1], below=False)
    parts = []
    for side, endpoint, name in ((below, low, "α=0"), (above, high, "α=1")):
        if side is None:
            side_name = "α < 0" if endpoint == low else "α > 1"
            why = f"no checkpoint beyond {name}: sweep there to test extrapolation"
            parts.append(undefined(f"no checkpoint at {side_name}", criterion, why))
            continue
        a = alpha_label(o.alphas[side])
        toward, away = (side, endpoint) if endpoint == low else (endpoint, side)
        share = above_zero(
            f"opt share more extreme at {a} than at {name}",
            _diff(s["opt_share"], toward, away),
            spec,
            f"opt_share({alpha_text(o.alphas[toward])}) − opt_share({alpha_text(o.alphas[away])})",
        )
        why = _no_share(o, side) or _no_share(o, endpoint)
        parts.append(undefined(share.name, share.criterion, why) if why else share)
        parts.append(
            non_inferior(f"solve rate at {a} not worse than at {name}", _diff(s["solve"], side, endpoint), spec)
        )
    finding = combine("extrapolation", parts, criterion)
    finding.excluded_problems = _unsampled(o, [i for i in (below, low, high, above) if i is not None])
    return finding


def _no_share(o: Outcomes, i: int) -> str | None:
    """Why the optimization share of failures, opt/(opt+corr), is undefined at checkpoint i, in
    words; None where it is defined (some optimization or correctness failure there)."""
    failures = o.counts[OutcomeClass.OPTIMIZATION_FAILURE][:, i] + o.counts[OutcomeClass.CORRECTNESS_FAILURE][:, i]
    if failures.sum() > 0:
        return None
    at = alpha_label(o.alphas[i], spaced=True)
    if o.counts[OutcomeClass.FORMAT_FAILURE][:, i].sum() > 0:
        return f"every failure at {at} is a format failure, so its optimization share of failures is undefined"
    return f"no sample at {at} fails, so its optimization share of failures is undefined"


def _beyond(o: Outcomes, wanted: float, below: bool) -> int | None:
    side = [i for i, a in enumerate(o.alphas) if a is not None and (a < 0 if below else a > 1)]
    return min(side, key=lambda i: (abs(o.alphas[i] - wanted), o.alphas[i]), default=None)
