"""The paper's four findings (docs/method.md), checked on any experiment: pure functions of `Outcomes`.

Each finding has a pre-set criterion, a statistic with a CI, and one of four statuses (`verdict`
and `combine`, the rule docs/findings.md writes as one table): shows (the criterion holds),
underpowered (it does not, but the CI still reaches the effect the criterion needs),
does_not_show (the CI rules that effect out) and not_tested (with the reason: e.g. F2 is tested
only where F1's direction holds). docs/findings.md explains each statistic.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from backend.alpha import alpha_label
from backend.analysis.ensembles import gain_kmax, gain_table, merged, sampled_problems, short_problems, standard_pools
from backend.analysis.findings_text import tiny_input_rule
from backend.analysis.frame import SOLVED_AT, Outcomes, best_single, bootstrap_weights
from backend.analysis.resampling import fit_additive_logit, half_correct, null_draws, t_ci
from backend.errors import UserError

FINDINGS = ("frontier", "extrapolation", "churn", "ensemble")
STATUSES = ("shows", "does_not_show", "underpowered", "not_tested")


class FindingsSpec(BaseModel):
    """How the four findings are tested. Every threshold is fixed before the data is seen."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    margin: float = Field(0.10, gt=0, le=1, title="Equivalence margin")
    """Solve rates (pass@1) within ±margin count as equal (and F2's extrapolated point as not worse when at most
    margin below its endpoint): 10 points is a difference a user would act on; smaller differences need more
    problems than most sweeps have to be told apart from zero."""
    equivalence_level: float = Field(0.90, gt=0, lt=1, title="Equivalence CI level")
    """Flatness is shown when this CI of the difference lies inside ±margin (the two one-sided 5 % tests at 90 %), and
    non-inferiority when its lower bound is above −margin (one one-sided 5 % test)."""
    ci_level: float = Field(0.95, gt=0, lt=1, title="CI level")
    """Level of every other CI: a difference shows when this CI's lower bound is above 0."""
    min_effect: float = Field(0.02, gt=0, le=1, title="Smallest effect of interest")
    """A share change or pass@k gain below 2 points is not worth reporting: a criterion "above 0" needs at least this
    effect, so a CI that stops below it rules the effect out (does not show) and one that reaches it does not
    (underpowered)."""
    replicates: int = Field(2000, ge=50, title="Bootstrap replicates")
    """Problems resampled with replacement, the same draw for both sides of every difference (paired). F4 is a row
    of the gain table and resamples as it does (ensembles.GAIN_REPLICATES, GAIN_SPLITS), so the two agree."""
    null_replicates: int = Field(500, ge=20, title="Null replicates (churn)")
    """Sweeps simulated from the no-churn model; 500 puts the 95th percentile within about ±1 percentile point."""
    null_quantile: float = Field(0.95, gt=0, lt=1, title="Null quantile (churn)")
    """Churn shows when the observed value is above this quantile of its no-churn distribution (a 5 % test)."""
    splits: int = Field(8, ge=1, title="Random half-splits")
    """Churn chooses on one half of each cell's samples and measures on the other; averaging over several random
    splits removes most of the noise one split adds, without changing what is estimated."""
    ensemble_k_fraction: float = Field(0.5, gt=0, lt=1, title="Ensemble k (share of a half)")
    """k for the ensemble test, as a share of the measuring half's samples: at k = all of them a single
    checkpoint's pass@k already reaches its ceiling, so a pool could not beat it."""
    extrapolation_alphas: tuple[float, float] = Field((-0.5, 1.5), title="Extrapolated α tested")
    """The α below 0 and above 1 where extrapolation is tested (the nearest extrapolated α on each side if absent):
    the paper's main extrapolated points."""
    solved_at: float = Field(SOLVED_AT, gt=0, le=1, title="Solved = pass rate at least")
    """A checkpoint solves a problem when at least this share of its samples is correct (frame.SOLVED_AT)."""
    seed: int = Field(0, title="Seed")
    """Seeds every resampling, so the same data gives the same verdicts."""


@dataclass
class Part:
    name: str
    status: str
    statistic: float | None
    ci_low: float | None
    ci_high: float | None
    criterion: str
    reason: str = ""  # why a part is not_tested


@dataclass
class Finding:
    finding: str
    status: str
    statistic: float | None
    ci_low: float | None
    ci_high: float | None
    criterion: str
    parts: list[Part] = field(default_factory=list)
    reason: str = ""  # why a finding is not_tested
    excluded_problems: list[dict] = field(default_factory=list)  # {problem_id, reason}: left out of its statistics

    def to_dict(self) -> dict:
        """JSON-ready: an undefined number (NaN, e.g. a share of zero failures) is None."""
        return _no_nan(asdict(self))


def _no_nan(value):
    if isinstance(value, dict):
        return {k: _no_nan(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_no_nan(v) for v in value]
    return None if isinstance(value, float) and np.isnan(value) else value


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


# -- the three kinds of test -------------------------------------------------------------------


def _ci(reps: np.ndarray, level: float, point: float | None = None, problems: int | None = None) -> tuple[float, float]:
    """The CI of a mean over `problems` resampled problems: the t interval (resampling.t_ci; the
    replicates' percentiles were liberal at 12 problems, bench/findings_calibration.py); without
    `problems`, the replicates' percentiles."""
    if problems is not None:
        lo, hi = t_ci(point, reps, problems, level)
        return float(lo), float(hi)
    tail = 50 * (1 - level)
    return float(np.nanpercentile(reps, tail)), float(np.nanpercentile(reps, 100 - tail))


def verdict(met: bool, lo: float, hi: float, needed: tuple[float, float]) -> str:
    """The one rule (docs/findings.md, "Statuses"): shows when the criterion is met; otherwise
    underpowered while the CI [lo, hi] still reaches the region of effects the criterion needs,
    `needed` = (low, high) — the data cannot rule that effect out — and does_not_show once it
    does not. Where the criterion is "CI above no effect", a CI that misses it contains no effect,
    so underpowered is then exactly "the CI holds both no effect and the needed effect"."""
    if met:
        return "shows"
    return "underpowered" if lo < needed[1] and hi > needed[0] else "does_not_show"


def undefined(name: str, criterion: str, reason: str) -> Part:
    """A part whose statistic is undefined on these data is not tested, with the reason in words: an
    undefined number is no evidence either way, so it gets no verdict."""
    return Part(name, "not_tested", None, None, None, criterion, reason)


def above_zero(
    name: str, point: float, reps: np.ndarray, spec: FindingsSpec, criterion: str, problems: int | None = None
) -> Part:
    """Shows when the CI's lower bound is above 0; the effect it needs is more than min_effect."""
    criterion = f"{criterion}: {spec.ci_level:.0%} CI lower bound > 0"
    if not np.isfinite(point):
        return undefined(name, criterion, "its statistic is undefined on these data")
    lo, hi = _ci(reps, spec.ci_level, point, problems)
    return Part(name, verdict(lo > 0, lo, hi, (spec.min_effect, np.inf)), float(point), lo, hi, criterion)


def equivalent(name: str, point: float, reps: np.ndarray, spec: FindingsSpec, problems: int | None = None) -> Part:
    """Equivalence: shows when the CI lies inside ±margin; the effect it needs is any difference inside it."""
    lo, hi = _ci(reps, spec.equivalence_level, point, problems)
    status = verdict(-spec.margin < lo and hi < spec.margin, lo, hi, (-spec.margin, spec.margin))
    return Part(name, status, float(point), lo, hi, f"{spec.equivalence_level:.0%} CI inside ±{spec.margin:g}")


def non_inferior(name: str, point: float, reps: np.ndarray, spec: FindingsSpec, problems: int | None = None) -> Part:
    """Non-inferiority: shows when the CI's lower bound is above −margin (better is never a failure)."""
    lo, hi = _ci(reps, spec.equivalence_level, point, problems)
    status = verdict(lo > -spec.margin, lo, hi, (-spec.margin, np.inf))
    return Part(name, status, float(point), lo, hi, f"{spec.equivalence_level:.0%} CI lower bound > −{spec.margin:g}")


def combine(name: str, parts: list[Part], criterion: str) -> Finding:
    """Every part shows: shows. Else the first of does_not_show, underpowered, not_tested that some
    part has: a finding is shown only when all of it is. The headline numbers are those of the
    part that decided."""
    statuses = [p.status for p in parts]
    status = next((s for s in ("does_not_show", "underpowered", "not_tested") if s in statuses), "shows")
    lead = parts[statuses.index(status)] if status != "shows" else parts[0]
    return Finding(name, status, lead.statistic, lead.ci_low, lead.ci_high, criterion, parts, lead.reason)


# -- F1, F2: class shares at the endpoints and beyond ------------------------------------------


def _index(o: Outcomes, alpha: float) -> int | None:
    hits = [i for i, a in enumerate(o.alphas) if a is not None and abs(a - alpha) < 1e-9]
    return hits[0] if hits else None


def _fraction(o: Outcomes, count: np.ndarray, W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-problem class fraction averaged over problems, per checkpoint: point[c], replicates[b, c]."""
    has = o.n > 0
    frac = np.where(has, count / np.maximum(o.n, 1), 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return frac.sum(axis=0) / np.maximum(has.sum(axis=0), 1), (W @ frac) / (W @ has)


def _shares(o: Outcomes, W: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    out = {
        "opt": _fraction(o, o.counts["optimization_failure"], W),
        "corr": _fraction(o, o.counts["correctness_failure"], W),
        "solve": _fraction(o, o.correct, W),
    }
    with np.errstate(invalid="ignore", divide="ignore"):  # no failures at all: undefined, NaN
        out["opt_share"] = tuple(opt / (opt + corr) for opt, corr in zip(out["opt"], out["corr"], strict=True))
    return out


def _diff(values: tuple[np.ndarray, np.ndarray], a: int, b: int) -> tuple[float, np.ndarray]:
    point, reps = values
    return float(point[a] - point[b]), reps[:, a] - reps[:, b]


def check_frontier(o: Outcomes, spec: FindingsSpec) -> Finding:
    """F1: optimization failures fall and correctness failures rise from θ_low to θ_high, at a flat solve rate."""
    low, high = _endpoints(o)
    s, P = _shares(o, bootstrap_weights(len(o.problems), spec.replicates, spec.seed)), len(o.problems)
    parts = [
        above_zero(
            "optimization failures fall from θ_low to θ_high",
            *_diff(s["opt"], low, high),
            spec,
            "opt(α=0) − opt(α=1), share of samples",
            P,
        ),
        above_zero(
            "correctness failures rise from θ_low to θ_high",
            *_diff(s["corr"], high, low),
            spec,
            "corr(α=1) − corr(α=0), share of samples",
            P,
        ),
        equivalent("solve rate flat: solve(α=1) − solve(α=0)", *_diff(s["solve"], high, low), spec, P),
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
        return Finding("extrapolation", "not_tested", None, None, None, criterion, [], reason)
    s = _shares(o, bootstrap_weights(len(o.problems), spec.replicates, spec.seed))
    below = _beyond(o, spec.extrapolation_alphas[0], below=True)
    above = _beyond(o, spec.extrapolation_alphas[1], below=False)
    parts = []
    for side, endpoint, name in ((below, low, "α=0"), (above, high, "α=1")):
        if side is None:
            side_name = "α < 0" if endpoint == low else "α > 1"
            parts.append(
                Part(
                    f"no checkpoint at {side_name}",
                    "not_tested",
                    None,
                    None,
                    None,
                    criterion,
                    f"no checkpoint beyond {name}: sweep there to test extrapolation",
                )
            )
            continue
        a = alpha_label(o.alphas[side])
        toward, away = (side, endpoint) if endpoint == low else (endpoint, side)
        share = above_zero(
            f"opt share more extreme at {a} than at {name}",
            *_diff(s["opt_share"], toward, away),
            spec,
            f"opt_share({o.alphas[toward]:g}) − opt_share({o.alphas[away]:g})",
            len(o.problems),
        )
        why = _no_share(o, side) or _no_share(o, endpoint)
        parts.append(undefined(share.name, share.criterion, why) if why else share)
        parts.append(
            non_inferior(
                f"solve rate at {a} not worse than at {name}", *_diff(s["solve"], side, endpoint), spec, len(o.problems)
            )
        )
    finding = combine("extrapolation", parts, criterion)
    finding.excluded_problems = _unsampled(o, [i for i in (below, low, high, above) if i is not None])
    return finding


def _no_share(o: Outcomes, i: int) -> str | None:
    """Why the optimization share of failures, opt/(opt+corr), is undefined at checkpoint i, in
    words; None where it is defined (some optimization or correctness failure there)."""
    if (o.counts["optimization_failure"][:, i].sum() + o.counts["correctness_failure"][:, i].sum()) > 0:
        return None
    at = alpha_label(o.alphas[i], spaced=True)
    if o.counts["format_failure"][:, i].sum() > 0:
        return f"every failure at {at} is a format failure, so its optimization share of failures is undefined"
    return f"no sample at {at} fails, so its optimization share of failures is undefined"


def _beyond(o: Outcomes, wanted: float, below: bool) -> int | None:
    side = [i for i, a in enumerate(o.alphas) if a is not None and (a < 0 if below else a > 1)]
    return min(side, key=lambda i: (abs(o.alphas[i] - wanted), o.alphas[i]), default=None)


# -- F3, F4: choose on one half of the samples, measure on the other ---------------------------


def _complete_axis(o: Outcomes) -> tuple[Outcomes, list[dict]]:
    """The merged checkpoints (those with an α), on the problems each of them sampled at least
    twice (a half-split needs samples on both sides), and the problems left out."""
    axis = o.select([c for c, a in zip(o.checkpoints, o.alphas, strict=True) if a is not None])
    try:
        return sampled_problems(axis, axis.checkpoints, 2)
    except UserError:
        raise UserError(
            "the churn and ensemble tests need at least 2 samples of every merged checkpoint on a problem"
        ) from None


@dataclass
class Halves:
    """Random half-splits of each cell: A chooses, B measures. Arrays are (splits, problems, α)."""

    n_a: np.ndarray
    c_a: np.ndarray
    n_b: np.ndarray
    c_b: np.ndarray


def _halves(o: Outcomes, splits: int, rng: np.random.Generator) -> Halves:
    c_a = half_correct(o.n, o.correct, splits, rng)
    n_a = np.broadcast_to(o.n // 2, c_a.shape)
    return Halves(n_a, c_a, o.n - n_a, o.correct - c_a)


def _choose(n_a: np.ndarray, c_a: np.ndarray, alphas: list, solved_at: float) -> np.ndarray:
    """The best single per split by the solved-set rule (frame.best_single), on the choosing half."""
    rate = c_a / n_a
    return best_single((rate >= solved_at).sum(axis=-2), rate.mean(axis=-2), alphas)


def _excess_churn(n_a, c_a, n_b, c_b, alphas: list, solved_at: float) -> np.ndarray:
    """Per problem, averaged over splits: solved on half B by some α but not by the best single
    chosen on half A. (..., splits, problems, α) → (..., problems)."""
    best = _choose(n_a, c_a, alphas, solved_at)
    solved_b = c_b / n_b >= solved_at
    by_best = np.take_along_axis(solved_b, np.broadcast_to(best[..., None, None], (*solved_b.shape[:-1], 1)), -1)
    return (solved_b.any(axis=-1) & ~by_best[..., 0]).mean(axis=-2)


def check_churn(o: Outcomes, spec: FindingsSpec) -> Finding:
    """F3: more problems solved somewhere on the α axis than by the best single α, beyond what
    sampling noise gives when every α moves every problem alike."""
    rng = np.random.default_rng(spec.seed)
    o, excluded = _complete_axis(o)
    h = _halves(o, spec.splits, rng)
    per_problem = _excess_churn(h.n_a, h.c_a, h.n_b, h.c_b, o.alphas, spec.solved_at)
    p_null = fit_additive_logit(o.n, o.correct)
    null = []
    for c in null_draws(o.n, p_null, spec.null_replicates, rng):
        c_a = np.moveaxis(half_correct(o.n, c, spec.splits, rng), 0, 1)  # (replicate, split, problem, α)
        n_a = np.broadcast_to(o.n // 2, c_a.shape)
        null.append(_excess_churn(n_a, c_a, o.n - n_a, c[:, None] - c_a, o.alphas, spec.solved_at).sum(axis=-1))
    null = np.concatenate(null)
    centre, needed = float(null.mean()), float(np.quantile(null, spec.null_quantile) - null.mean())
    W = bootstrap_weights(len(o.problems), spec.replicates, spec.seed + 1)
    lo, hi = _ci(W @ per_problem - centre, spec.ci_level)
    excess = float(per_problem.sum() - centre)
    status = verdict(excess > needed, lo, hi, (needed, np.inf))
    criterion = (
        f"problems solved (≥ {spec.solved_at:.0%} of samples) by some α but not by the best single, both measured on "
        f"the half of the samples the best was not chosen on, minus the mean under a no-churn model "
        f"(logit p = a_problem + b_α, {spec.null_replicates} simulated sweeps); shows above its "
        f"{spec.null_quantile:.0%} quantile, +{needed:.2f}"
    )
    part = Part("union − best single beyond the no-churn null (problems)", status, excess, lo, hi, criterion)
    return Finding("churn", status, excess, lo, hi, criterion, [part], excluded_problems=excluded)


def check_ensemble(o: Outcomes, spec: FindingsSpec) -> Finding:
    """F4: the gain table's own number (ensembles.gain_table), one row of it: a matched-budget pool
    along the extended frontier (interpolated + extrapolated, else all interpolated) against the
    best single at pass@k, the best chosen per k and cross-fitted, its CI choosing again in every
    bootstrap replicate; k is ensemble_k_fraction of the measuring half's samples."""
    name, members = list(standard_pools(o).items())[-1]
    try:
        kept, excluded = sampled_problems(o, list(dict.fromkeys([*merged(o), *members])), 2)
        kmax = gain_kmax(kept, merged(kept))
    except UserError as err:
        return Finding(
            "ensemble",
            "not_tested",
            None,
            None,
            None,
            "a matched-budget pool beats the best single",
            [],
            f"too few samples per cell ({err})",
        )
    half = int(kept.n[:, [kept.checkpoints.index(c) for c in merged(kept)]].min()) // 2
    k = min(kmax, int(spec.ensemble_k_fraction * half))
    if k < 1:
        return Finding(
            "ensemble",
            "not_tested",
            None,
            None,
            None,
            "a matched-budget pool beats the best single",
            [],
            "too few samples per cell for a pass@k below the measuring half's size; sample more",
            excluded_problems=excluded,
        )
    table = gain_table(o, {name: members}, seed=spec.seed, ks=[k], level=spec.ci_level)
    row = next(r for r in table.to_dicts() if r["pool"] == name)
    criterion = (
        f"pass@{k} of a matched-budget pool of {name} ({len(members)} members), minus the best single's pass@{k}; "
        f"the best single chosen at k = {k} on one half of the samples and scored with the pool on the other "
        f"(the gain table's row at k = {k}, `analyze ensembles`)"
    )
    part = gain_part(f"pool ({name}) − best single at pass@{k}", row, spec, criterion)
    return Finding(
        "ensemble",
        part.status,
        part.statistic,
        part.ci_low,
        part.ci_high,
        part.criterion,
        [part],
        excluded_problems=excluded,
    )


def gain_part(name: str, row: dict, spec: FindingsSpec, criterion: str) -> Part:
    """A gain table row as a "greater than 0" part: its own estimate and CI (centred on the
    cross-fitted estimate), the status by the one rule."""
    lo, hi = float(row["gain_lo"]), float(row["gain_hi"])
    status = verdict(lo > 0, lo, hi, (spec.min_effect, np.inf))
    return Part(name, status, float(row["gain"]), lo, hi, f"{criterion}: {spec.ci_level:.0%} CI lower bound > 0")
