"""Power of the four findings by simulation: before a sweep is run, how often would each finding's
test show an effect of a given size with this many problems, samples and α points?

A planned sweep and the effect it is powered for are a `PowerSpec`. Each simulated sweep draws
problems from one model of the outcome mix along α, samples every (problem, α) cell with n
multinomial draws, and runs the findings module's own tests (`check_findings`) on it. Power is the
share of simulated sweeps where a finding shows; the same run gives the share where it does not show
and where it is underpowered. With every effect set to zero (`PowerSpec.null()`) the share that shows
is the tests' false-positive rate.

The model, per problem p and α:
- solve rate: logit s_p(α) = b_p + churn·sin(π·α/2 + φ_p), with b_p ~ N(logit solve_rate, problem_sd²)
  and a phase φ_p uniform on [0, 2π): each problem is best at its own α (one peak per four α-units),
  while the solve rate averaged over problems is the same at every α (churn = 0: every α alike);
- among the failures, the optimization share: logit o(α) = logit opt_share_low + α·(logit
  opt_share_high − logit opt_share_low), linear in α, so it goes on beyond both endpoints as the
  paper's frontier does; the rest are correctness failures (no format failures).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import t as student_t

from backend.alpha import alpha_label
from backend.analysis.findings import FINDINGS, STATUSES, FindingsSpec, check_findings
from backend.analysis.frame import Outcomes, point_kind
from backend.analysis.spec import PowerSpec  # declared with the other specs: `power --help` loads no numpy
from backend.outcomes import OutcomeClass


def _logit(p: float) -> float:
    return float(np.log(p / (1 - p)))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def cell_probabilities(spec: PowerSpec, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """One simulated set of problems: each outcome class's probability per (problem, α)."""
    alphas = np.asarray(spec.alphas, dtype=float)
    base = rng.normal(_logit(spec.solve_rate), spec.problem_sd, spec.problems)
    phase = rng.uniform(0, 2 * np.pi, spec.problems)
    solve = _sigmoid(base[:, None] + spec.churn * np.sin(np.pi / 2 * alphas[None, :] + phase[:, None]))
    low, high = _logit(spec.opt_share_low), _logit(spec.opt_share_high)
    opt_share = _sigmoid(low + alphas * (high - low))[None, :]
    return {
        OutcomeClass.CORRECT: solve,
        OutcomeClass.OPTIMIZATION_FAILURE: (1 - solve) * opt_share,
        OutcomeClass.CORRECTNESS_FAILURE: (1 - solve) * (1 - opt_share),
        OutcomeClass.FORMAT_FAILURE: np.zeros_like(solve),
    }


def simulate_sweep(spec: PowerSpec, rng: np.random.Generator) -> Outcomes:
    """One simulated sweep: n multinomial draws per (problem, α) cell from `cell_probabilities`."""
    probs = cell_probabilities(spec, rng)
    classes = list(probs)
    stacked = np.stack([probs[c] for c in classes], axis=-1)
    counts = rng.multinomial(spec.n, stacked / stacked.sum(axis=-1, keepdims=True))
    names = [alpha_label(a) for a in spec.alphas]
    problems = [f"sim-{i}" for i in range(spec.problems)]
    return Outcomes(
        problems,
        problems,
        [None] * spec.problems,
        names,
        names,
        list(spec.alphas),
        [point_kind("merged", a) for a in spec.alphas],
        np.full((spec.problems, len(spec.alphas)), spec.n),
        {c: counts[..., i] for i, c in enumerate(classes)},
    )


def power(
    spec: PowerSpec, findings: FindingsSpec | None = None, progress=None, ensemble: dict | None = None
) -> dict[str, dict[str, float]]:
    """{finding: {status: share of the simulated sweeps}} for the four findings. `ensemble`, if
    given, receives F4's mean gain and standard error over the sweeps, its n and k (ensemble_line).
    `progress(done, total)` is called after each simulated sweep."""
    rng = np.random.default_rng(spec.seed)
    tally = {f: dict.fromkeys(STATUSES, 0) for f in FINDINGS}
    gains, ses = [], []
    for run in range(spec.runs):
        for finding in check_findings(simulate_sweep(spec, rng), findings):
            tally[finding.finding][finding.status] += 1
            if finding.finding == "ensemble" and finding.ci_low is not None:
                gains.append(finding.statistic)
                ses.append((finding.ci_high - finding.ci_low) / 2)
        if progress:
            progress(run + 1, spec.runs)
    if ensemble is not None:
        crit = float(student_t.ppf(0.975, max(spec.problems - 1, 1)))
        ensemble |= {
            "gain": float(np.mean(gains)) if gains else None,
            "se": float(np.mean(ses)) / crit if ses else None,
            "n": spec.n,
            "k": (findings or FindingsSpec()).ensemble_k,
            "shows": tally["ensemble"]["shows"] / spec.runs,
        }
    return {f: {s: count / spec.runs for s, count in statuses.items()} for f, statuses in tally.items()}


def ensemble_line(d: dict, problems: int) -> str:
    """F4's power at this design in words, and, below one half, the samples per cell that would give
    80 %: n·((t_crit + t_0.8)·se / gain)², the mean gain and standard error of the simulated sweeps,
    the standard error shrinking as 1/√n (sampling noise dominating; where problems' gains differ, more)."""
    shows = d["shows"]
    line = f"F4 (ensemble, pass@{d['k']}) shows in {shows:.0%} of simulated sweeps at n = {d['n']} per cell"
    if shows >= 0.5 or d["gain"] is None:
        return line + "."
    if d["gain"] <= 0:
        return (
            line
            + f": in this model a pool does not beat the best single at pass@{d['k']} (mean gain {d['gain']:+.3f})."
        )
    df = max(problems - 1, 1)
    scale = ((student_t.ppf(0.975, df) + student_t.ppf(0.8, df)) * d["se"] / d["gain"]) ** 2
    needed = max(d["n"], 2 * math.ceil(d["n"] * scale / 2))
    return line + f", below one half: about {needed} samples per cell would give 80 % (mean gain {d['gain']:+.3f})."


def power_table(effect: dict[str, dict[str, float]], null: dict[str, dict[str, float]]) -> str:
    """Markdown: per finding, the share of simulated sweeps in each status with the effect, and
    the share that shows with no effect (the false-positive rate)."""
    lines = [
        "| finding | power (shows) | does not show | underpowered | not tested | shows with no effect |",
        "|---|---|---|---|---|---|",
    ]
    for f in FINDINGS:
        e = effect[f]
        lines.append(
            f"| {f} | {e['shows']:.2f} | {e['does_not_show']:.2f} | {e['underpowered']:.2f} | {e['not_tested']:.2f} "
            f"| {null[f]['shows']:.2f} |"
        )
    return "\n".join(lines)
