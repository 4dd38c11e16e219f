"""The world families of bench/findings_calibration.py: simulated sweeps whose truth is known, each
built as the `Outcomes` that `analyze` reads from the store.

Every family shares one messy base, the shape real studies have: per problem, a solve rate from a
Beta(0.7, 0.7) with 10 % of problems at exactly 0 and 10 % at exactly 1; an optimization share of
failures from a Beta(2, 2) and a format share of failures from a Beta(0.5, 8) (6 % on average);
n = 16 or 24 samples per cell, by problem; each checkpoint's sandbox errors at its own rate,
uniform on 0–6 % (3 % on average), removed from the judged n; 1.5 % of cells never sampled; an
unequally spaced grid of 10 α from −1 to 2. What differs between families is how a problem's
outcomes move along α (`probabilities`):

- identical: every α alike.
- common-peak: logit solve = logit s_p − κ_p (α − 0.5)², κ_p ~ Gamma(0.5, 2): every problem peaks
  at α = 0.5, some sharply, most hardly at all (no churn; the endpoints alike).
- monotone: logit solve = logit s_p + β_p (α − 0.5), β_p ~ Gamma(0.5, 2): every problem improves
  with α, at its own slope (no churn: α = 2 is every problem's best).
- skewed: the optimization share of failures moves linearly in α, by +0.6 from α = −1 to 2 on 15 %
  of problems and by −0.106 on the rest (the population mean moves by exactly 0): the review's
  world, its sign the one that flatters F1 and T2 (most problems' correctness failures rise).
- skewed-30: as skewed, 30 % of problems by +0.3 and the rest by −0.129: a skew a dozen problems
  can show (skewed's rare problems are missing from 14 % of 12-problem draws).
- skewed-vs-flat: the first half of the problems as in skewed, the second half still (T2's sets).
- solve+margin: solve(α) = s_p + 0.2·clip(α, 0, 1)·(1 − s_p): the population's solve rate 0.10
  higher at α ≥ 1 than at α ≤ 0 (F1's equivalence margin).
- f2-null: the optimization share of failures falls logit-linearly by logit 0.8 → logit 0.2 from
  α = 0 to 1 and stops there; beyond the endpoints each problem solves 20 % less (the population
  0.10 less); an independent checkpoint drawn from α = 0.5's own rates (on the curve).
- f2-planted: that fall goes on beyond the endpoints at a flat solve rate; the independent
  checkpoint off the curve: α = 0.5's cells with 60 % of each problem's correct samples turned into
  failures, half of them optimization failures (each failure share +0.15 in the population, 0.21
  from the curve, perpendicular to it: 1.5 times recovery's 0.141 margin).
- frontier+churn: the optimization share of failures falls by logit 0.7 → logit 0.3 from α = 0 to
  1 and on beyond, and each problem's solve rate swings along α around its own best α,
  logit s_p + 1.5·sin(π α / 2 + φ_p).
- did-planted: the first half of the problems has frontier+churn's fall without its churn, the
  second half is identical (T2's effect: correctness failures rise more on the first half).

The first half of a world's problems is T2's "withheld" set, the second its "kept" set.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit, logit

from backend.alpha import alpha_label
from backend.analysis.frame import Outcomes, point_kind
from backend.analysis.passk import miss_ratio_table
from backend.outcomes import OUTCOME_CLASSES as CLASSES

ALPHAS = np.array([-1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0, 1.25, 1.5, 2.0])
MID = int(np.flatnonzero(ALPHAS == 0.5)[0])
ENDPOINTS = (int(np.flatnonzero(ALPHAS == 0.0)[0]), int(np.flatnonzero(ALPHAS == 1.0)[0]))
OFF_CURVE = 0.3  # the share of the off-curve checkpoint's correct samples moved into each failure class
SANDBOX_ERRORS, MISSING = 0.06, 0.015  # a checkpoint's sandbox-error rate is uniform on [0, 6 %]; cells never sampled
FAMILIES = (
    "identical",
    "common-peak",
    "monotone",
    "skewed",
    "skewed-30",
    "skewed-vs-flat",
    "solve+margin",
    "f2-null",
    "f2-planted",
    "frontier+churn",
    "did-planted",
)


@dataclass
class Cells:
    """probs[p, c, class] in CLASSES order for the α grid, plus an independent checkpoint's (or None)."""

    probs: np.ndarray
    independent: np.ndarray | None = None


def _base(P: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    solve = rng.beta(0.7, 0.7, P)
    u = rng.random(P)
    solve[u < 0.1], solve[u > 0.9] = 0.0, 1.0
    return solve[:, None], rng.beta(2, 2, P)[:, None], rng.beta(0.5, 8, P)[:, None]


def _curve(solve: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """logit(solve) + shift, a problem solved never or always staying so."""
    inner = expit(logit(np.clip(solve, 1e-9, 1 - 1e-9)) + shift)
    return np.where((solve == 0) | (solve == 1), solve, inner)


def _stack(solve, opt_share, fmt) -> np.ndarray:
    solve, opt_share = np.broadcast_arrays(solve, opt_share)
    fail = 1 - solve
    return np.stack([solve, fail * (1 - fmt) * opt_share, fail * (1 - fmt) * (1 - opt_share), fail * fmt], axis=-1)


def _falling(opt_share: np.ndarray, a: np.ndarray, at_0: float, at_1: float) -> np.ndarray:
    return expit(logit(opt_share) + a * (logit(at_1) - logit(at_0)))


def _skewed(P: int, rng: np.random.Generator, a: np.ndarray, share: float = 0.15, move: float = 0.6) -> np.ndarray:
    """An optimization share of failures moving by `move` over the grid on `share` of problems and
    the other way on the rest, by as much as makes the population's mean move 0."""
    rare = rng.random((P, 1)) < share
    moves = np.where(rare, move, -move * share / (1 - share))
    return rng.uniform(0.35, 0.65, (P, 1)) + moves * (a - 0.5) / 3.0


def probabilities(family: str, P: int, rng: np.random.Generator) -> Cells:
    """The cell probabilities of `family` (the module's docstring) for P problems."""
    solve, opt, fmt = _base(P, rng)
    a = ALPHAS[None, :]
    first = np.arange(P)[:, None] < P // 2
    if family == "identical":
        return Cells(_stack(solve + 0 * a, opt, fmt))
    if family == "common-peak":
        return Cells(_stack(_curve(solve, -rng.gamma(0.5, 2, (P, 1)) * (a - 0.5) ** 2), opt, fmt))
    if family == "monotone":
        return Cells(_stack(_curve(solve, rng.gamma(0.5, 2, (P, 1)) * (a - 0.5)), opt, fmt))
    if family in ("skewed", "skewed-30", "skewed-vs-flat"):
        moving = _skewed(P, rng, a, *((0.30, 0.3) if family == "skewed-30" else ()))
        if family == "skewed-vs-flat":
            moving = np.where(first, moving, moving[:, [MID]])
        return Cells(_stack(solve + 0 * a, moving, fmt))
    if family == "solve+margin":
        return Cells(_stack(solve + 0.2 * np.clip(a, 0, 1) * (1 - solve), opt, fmt))
    if family == "frontier+churn":
        swing = 1.5 * np.sin(np.pi / 2 * a + rng.uniform(0, 2 * np.pi, (P, 1)))
        return Cells(_stack(_curve(solve, swing), _falling(opt, a, 0.7, 0.3), fmt))
    if family == "did-planted":
        return Cells(_stack(solve + 0 * a, np.where(first, _falling(opt, a, 0.7, 0.3), opt), fmt))
    if family in ("f2-null", "f2-planted"):
        beyond = (a < 0) | (a > 1)
        if family == "f2-null":
            cells = _stack(solve * (1 - 0.2 * beyond), _falling(opt, np.clip(a, 0, 1), 0.8, 0.2), fmt)
            return Cells(cells, cells[:, MID])
        cells = _stack(solve + 0 * a, _falling(opt, a, 0.8, 0.2), fmt)
        moved = OFF_CURVE * cells[:, MID, 0]  # 60 % of the correct samples, half to each failure class
        return Cells(cells, cells[:, MID] + np.stack([-2 * moved, moved, moved, 0 * moved], axis=-1))
    raise ValueError(f"unknown family {family!r}")


def seed_of(family: str, problems: int, run: int) -> int:
    """A world's seed, from its family's name (not its place in FAMILIES): a family added later
    leaves every other world as it was."""
    return zlib.crc32(family.encode()) * 1_000_003 + 7919 * problems + run


@dataclass
class World:
    family: str
    problems: int
    seed: int
    o: Outcomes
    cache: dict = field(default_factory=dict)

    def get(self, key: str, make):
        """A computation several tests share (e.g. F1's parts), made once per world."""
        if key not in self.cache:
            self.cache[key] = make()
        return self.cache[key]

    @property
    def halves(self) -> tuple[list[str], list[str]]:
        """T2's sets: the first half of the problems (withheld) and the second (kept)."""
        half = self.problems // 2
        return self.o.problems[:half], self.o.problems[half:]


def world(family: str, problems: int, run: int) -> World:
    """One simulated sweep: the family's cells, each sampled n = 16 or 24 times (by problem), less
    its checkpoint's sandbox errors; 1.5 % of cells never sampled."""
    seed = seed_of(family, problems, run)
    rng = np.random.default_rng(seed)
    cells = probabilities(family, problems, rng)
    probs, alphas = cells.probs, [float(x) for x in ALPHAS]
    labels = [alpha_label(x) for x in alphas]
    if cells.independent is not None:
        probs = np.concatenate([probs, cells.independent[:, None, :]], axis=1)
        labels, alphas = [*labels, "independent"], [*alphas, None]
    C = probs.shape[1]
    planned = np.repeat(rng.choice([16, 24], problems)[:, None], C, axis=1)
    n = rng.binomial(planned, 1 - rng.uniform(0, SANDBOX_ERRORS, C)[None, :])
    n[rng.random(n.shape) < MISSING] = 0
    counts = rng.multinomial(n, np.clip(probs, 0, None) / np.clip(probs, 0, None).sum(axis=-1, keepdims=True))
    names = [f"p{i:03d}" for i in range(problems)]
    kinds = [point_kind("merged" if x is not None else "trained", x) for x in alphas]
    o = Outcomes(
        names,
        names,
        [None] * problems,
        labels,
        labels,
        alphas,
        kinds,
        n,
        {c: counts[..., i] for i, c in enumerate(CLASSES)},
    )
    return World(family, problems, seed, o)


TRUTH_PROBLEMS = 400_000
_truths: dict[str, dict] = {}


def truth(family: str) -> dict:
    """The family's population values, from TRUTH_PROBLEMS problems' cell probabilities (no sampling
    noise): what an interval over problems covers. `share[α, class]` the mean class share,
    `passk[k][α]` the mean pass@k (1 − (1 − p)^k: the unbiased estimator's expectation), `halves`
    the mean correctness-failure change from α = 0 to 1 on each half's population (T2)."""
    if family not in _truths:
        probs = probabilities(family, TRUTH_PROBLEMS, np.random.default_rng(12345)).probs
        low, high = ENDPOINTS
        change = probs[:, high, 2] - probs[:, low, 2]
        half = TRUTH_PROBLEMS // 2
        _truths[family] = {
            "share": probs.mean(axis=0),
            "passk": {k: (1 - (1 - probs[..., 0]) ** k).mean(axis=0) for k in (1, 4)},
            "halves": (float(change[:half].mean()), float(change[half:].mean())),
        }
    return _truths[family]


def slope(values: np.ndarray) -> float:
    """The least-squares slope on ALPHAS of per-α values."""
    centred = ALPHAS - ALPHAS.mean()
    return float(values @ centred / (centred @ centred))


def passk_values(o: Outcomes, c: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per problem, pass@k of checkpoint c (unbiased), and which problems have ≥ k samples of it."""
    has = o.n[:, c] >= k
    table = miss_ratio_table(o.n[:, c], o.correct[:, c], k)[:, k]
    return np.where(has, 1 - np.nan_to_num(table), 0.0), has
