"""The tests bench/findings_calibration.py calibrates: a registry, one entry per reported test.

An entry names the test, its estimator and decision, its nominal level, the families where its
null holds (its false-positive rate is measured there) and those where an effect is planted (its
power), and a function of a `World` (bench/calibration_worlds.py) that runs the project's own code
at its defaults and says whether the test shows (True), does not (False) or was not tested (None).
Coverage entries (kind="coverage") say whether a reported CI covers the family's population value.

Adding a test is one decorated function here, e.g. a checkpoint-tier test (its family-wise false
separation in worlds where no checkpoint differs):

    @test("tiers: some checkpoint separated from the best", "paired t over problems, Holm across checkpoints",
          "any checkpoint below tier 1", 0.05, nulls=("identical",))
    def tiers_separate(w):
        return any(row["tier"] > 1 for row in w.get("tiers", lambda: checkpoint_tiers(w.o)))

Its rows then appear in every table the bench prints (false positives per null family and size,
power per planted family), and docs/findings.md's table gains them from the next full run. Where
a test needs a world no family gives, add a family to calibration_worlds (appended to FAMILIES;
a world's seed comes from its family's name, so no other world changes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from calibration_worlds import ALPHAS, ENDPOINTS, MID, World, slope, truth

from backend.analysis.did import difference_in_differences, endpoint_change
from backend.analysis.ensembles import (
    gain_kmax,
    gain_table,
    merged,
    passk_per_checkpoint,
    sampled_problems,
    standard_pools,
)
from backend.analysis.findings import FindingsSpec, check_churn, check_ensemble, check_extrapolation, check_frontier
from backend.analysis.frontier import frontier_table
from backend.analysis.recovery import recovery
from backend.analysis.trend import slopes
from backend.outcomes import OUTCOME_CLASSES

NULLS_OF_CHANGE = ("identical", "common-peak", "skewed", "skewed-30")  # a class share alike at α = 0 and 1
NO_CHURN = ("identical", "common-peak", "monotone")  # some α solves every problem at least as often as any
COVERED = ("identical", "common-peak", "monotone", "skewed", "skewed-30", "frontier+churn")  # coverage rows' families


@dataclass(frozen=True)
class Test:
    name: str
    estimator: str
    decision: str
    nominal: float  # the false-positive rate it claims; for coverage, 1 − the CI's level
    nulls: tuple[str, ...]
    planted: tuple[str, ...]
    run: Callable[[World], bool | None]
    kind: str = "test"  # or "coverage"
    gated: bool = False  # tested only where another test showed: a world it was not tested in counts as not shown


TESTS: list[Test] = []


def test(name, estimator, decision, nominal, nulls=(), planted=(), kind="test", gated=False):
    """Register the decorated function as a test (or a coverage check) of the bench."""

    def add(run):
        TESTS.append(Test(name, estimator, decision, nominal, tuple(nulls), tuple(planted), run, kind, gated))
        return run

    return add


def spec(w: World) -> FindingsSpec:
    return FindingsSpec(seed=w.seed)


def shows(part) -> bool | None:
    return None if part is None or part.status == "not_tested" else part.status == "shows"


def f1(w: World):
    return w.get("f1", lambda: check_frontier(w.o, spec(w)))


def f2_part(w: World, name: str):
    """F2's part named `name` (None where F2 was not tested: F1's directions did not show)."""
    f2 = w.get("f2", lambda: check_extrapolation(w.o, spec(w), f1(w)))
    return next((p for p in f2.parts if p.name == name), None)


ABOVE_0 = "95 % t over problems, widened for skewness, lower > 0"
F1_PARTS = [
    ("F1 optimization failures fall", "opt(0) − opt(1), mean share", ABOVE_0, 0.025, NULLS_OF_CHANGE, "frontier+churn"),
    ("F1 correctness failures rise", "corr(1) − corr(0)", ABOVE_0, 0.025, NULLS_OF_CHANGE, "frontier+churn"),
    ("F1 solve rate flat", "solve(1) − solve(0)", "90 % interval inside ±0.10 (TOST)", 0.05, ("solve+margin",),
     "identical"),
]  # fmt: skip
for i, (name, estimator, decision, nominal, nulls, planted) in enumerate(F1_PARTS):
    test(name, estimator, decision, nominal, nulls, (planted,))(lambda w, i=i: shows(f1(w).parts[i]))
F2_PARTS = {
    "F2 opt share more extreme at α=−0.5": ("opt share more extreme at α=-0.5 than at α=0", ABOVE_0, 0.025),
    "F2 opt share more extreme at α=1.5": ("opt share more extreme at α=1.5 than at α=1", ABOVE_0, 0.025),
    "F2 solve not worse at α=−0.5": ("solve rate at α=-0.5 not worse than at α=0", "90 % lower > −0.10", 0.05),
    "F2 solve not worse at α=1.5": ("solve rate at α=1.5 not worse than at α=1", "90 % lower > −0.10", 0.05),
}
for row, (part, decision, nominal) in F2_PARTS.items():  # gated: F2 is tested only where F1's directions show
    test(row, part, decision, nominal, ("f2-null",), ("f2-planted",), gated=True)(
        lambda w, p=part: shows(f2_part(w, p))
    )


@test("F3 churn (= the Churn page's excess)", "union (own best α, cross-fitted) − closest single, problems",
      "min over α* of 95 % lower bounds > 0", 0.025, NO_CHURN, ("frontier+churn",))  # fmt: skip
def f3(w):
    found = check_churn(w.o, spec(w))
    return None if found.status == "not_tested" else found.status == "shows"


@test("F4 ensemble at k = 4", "pool − per-k best single, cross-fitted, at k fixed by design",
      "estimate ± t·bootstrap sd (re-chosen), lower > 0", 0.025, NO_CHURN, ("frontier+churn",))  # fmt: skip
def f4(w):
    found = check_ensemble(w.o, spec(w))
    return None if found.status == "not_tested" else found.status == "shows"


def gains(w: World):
    """The gain table at k = 1, 4 and its largest k (where it reaches them), as `analyze ensembles` makes it."""

    def make():
        kmax = gain_kmax(*sampled_problems(w.o, merged(w.o), 2)[:1], merged(w.o))
        table = gain_table(w.o, standard_pools(w.o), seed=w.seed, ks=sorted({1, min(4, kmax), kmax}))
        return {(r["pool"], r["k"] if r["k"] in (1, 4) else "max"): r["gain_lo"] > 0
                for r in table.iter_rows(named=True) if r["pool"] != "best single"}  # fmt: skip

    return w.get("gains", make)


for pool in ("all interpolated", "interpolated + extrapolated"):
    for k in (1, 4, "max"):
        test(f"gain table, {pool}, k = {k}", "pool − per-k best single, cross-fitted",
             "estimate ± t·bootstrap sd (re-chosen per replicate), lower > 0", 0.025, NO_CHURN,
             ("frontier+churn",))(lambda w, key=(pool, k): gains(w).get(key))  # fmt: skip


def excludes_0(row: dict) -> bool:
    return not row["slope_lo"] <= 0 <= row["slope_hi"]


for i, name in enumerate(("optimization", "correctness")):
    test(f"trend slope, {name} share", "least-squares slope on α of the mean share",
         "95 % t over problems, widened for skewness, excludes 0", 0.05, ("identical", "skewed", "skewed-30"),
         ("frontier+churn",))(lambda w, i=i: excludes_0(slope_row(w, i)))  # fmt: skip


@test("recovery: off the curve", "distance to the interpolation polyline",
      "90 % t CI not inside 0.141, and above its parametric null's 95th pct", 0.05, ("f2-null",),
      ("f2-planted",))  # fmt: skip
def recovered(w):
    rows = w.get("recovery", lambda: recovery(w.o, seed=w.seed))
    return rows[0]["status"] == "shows"


def did(w: World):
    withheld, kept = w.halves
    return w.get("did", lambda: difference_in_differences(endpoint_change(w.o, withheld), endpoint_change(w.o, kept)))


@test("T2 difference-in-differences (lab)", "corr(1) − corr(0), first half of the problems minus second",
      "95 % Welch t over problems, widened for skewness, lower > 0", 0.025,
      ("identical", "common-peak", "skewed", "skewed-30", "skewed-vs-flat"), ("did-planted",))  # fmt: skip
def t2(w):
    found = did(w)
    return None if found.status == "not_tested" else found.status == "shows"


# -- coverage of the reported CIs over problems --------------------------------------------------


def coverage(name: str, estimator: str, interval, value, level: float = 0.95) -> None:
    """Register a coverage check: `interval(w)` the reported (lo, hi), `value(family)` what it should hold."""

    def covers(w: World) -> bool | None:
        lo, hi = interval(w)
        return None if lo is None else bool(lo <= value(w.family) <= hi)

    test(name, estimator, f"{level:.0%} CI covers the population's", 1 - level, COVERED, kind="coverage")(covers)


def frontier_row(w: World, averaging: str = "per_problem") -> dict:
    return w.get(f"frontier {averaging}", lambda: frontier_table(w.o, averaging).row(ENDPOINTS[0], named=True))


def share(family: str, alpha: int, cls: int) -> float:
    return float(truth(family)["share"][alpha, cls])


CLASS_NAMES = OUTCOME_CLASSES
for i, cls in enumerate(CLASS_NAMES):
    coverage(
        f"frontier table CI: {cls} at α = 0",
        "mean share over problems",
        lambda w, cls=cls: (frontier_row(w)[f"{cls}_lo"], frontier_row(w)[f"{cls}_hi"]),
        lambda family, i=i: share(family, ENDPOINTS[0], i),
    )
coverage(
    "frontier table CI: correct at α = 0, per sample",
    "pooled share",
    lambda w: (frontier_row(w, "per_sample")["correct_lo"], frontier_row(w, "per_sample")["correct_hi"]),
    lambda family: share(family, ENDPOINTS[0], 0),
)


def passk_row(w: World, k: int) -> dict:
    table = w.get("passk", lambda: passk_per_checkpoint(w.o.select(w.o.checkpoints[MID : MID + 1]), kmax=4))
    return table.row(k - 1, named=True)


for k in (1, 4):
    coverage(
        f"pass@k band: α = 0.5 at k = {k}",
        "mean unbiased pass@k over problems",
        lambda w, k=k: (passk_row(w, k)["lo"], passk_row(w, k)["hi"]),
        lambda family, k=k: float(truth(family)["passk"][k][MID]),
    )


def slope_row(w: World, i: int) -> dict:
    return w.get("slopes", lambda: slopes(w.o))[i]


for i, name in enumerate(("optimization", "correctness")):
    coverage(
        f"trend slope CI, {name} share",
        "least-squares slope on α",
        lambda w, i=i: (slope_row(w, i)["slope_lo"], slope_row(w, i)["slope_hi"]),
        lambda family, i=i: slope(truth(family)["share"][:, 1 + i]),
    )

LOW, HIGH = ENDPOINTS
F1_TRUTHS = (  # each part's population value: opt(0) − opt(1), corr(1) − corr(0), solve(1) − solve(0)
    lambda f: share(f, LOW, 1) - share(f, HIGH, 1),
    lambda f: share(f, HIGH, 2) - share(f, LOW, 2),
    lambda f: share(f, HIGH, 0) - share(f, LOW, 0),
)
for i, name in enumerate(("opt(0) − opt(1)", "corr(1) − corr(0)", "solve(1) − solve(0)")):
    coverage(
        f"F1 part CI: {name}",
        "difference of mean shares",
        lambda w, i=i: (f1(w).parts[i].ci_low, f1(w).parts[i].ci_high),
        F1_TRUTHS[i],
        level=0.95 if i < 2 else 0.90,  # flatness is decided on a 90 % CI
    )
coverage(
    "T2 CI",
    "difference in differences",
    lambda w: (did(w).ci_low, did(w).ci_high),
    lambda family: truth(family)["halves"][0] - truth(family)["halves"][1],
)

assert len({t.name for t in TESTS}) == len(TESTS), "test names must be unique"
assert ALPHAS.size == 10 and np.isin([-0.5, 0.0, 1.0, 1.5], ALPHAS).all()
