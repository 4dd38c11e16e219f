"""Per-problem time limits, and which problems can tell fast code from slow code (issue #29's third
design, step 1). Pure bookkeeping over the lab's own judge: nothing here trains or samples.

- **Limit.** L_p = max(0.05 s, 3 × the reference's largest CPU time over `runs` runs), measured on
  the problem's lab tests under a generous limit, so a slow run of the machine widens it.
- **Separating**, under L_p:
  - the brute force passes every test of tier <= 3 within L_p / 3 (slow code is not punished where
    speed does not matter),
  - it exceeds L_p (TLE) on at least 2 tier-5 tests (it is punished where speed matters), and
  - a buggy-fast variant fails a test of tier >= 3 (the tests catch fast but wrong code on real
    inputs, not only on the first tiny one).
- **As the rewards see it** (reported, not required): the first failing tier of the brute force and
  of each buggy-fast variant (any verdict but AC, and for the brute force a CPU time over L_p),
  which is what R_k reads (R_k pays iff nothing of tier <= k fails), and so, per variant, whether
  R_3 and R_inf tell it from the brute force (`told_apart`). Build F's data: most buggy samples
  first fail at tier <= 3, so both rewards punish them, and the rewards differ only on brute force.
- **Sized** (reported, not required): the tier-5 tests on which the brute force needs at least
  20 × L_p, so a slow program fails there by a wide margin, not by a noisy one. The brute force is
  judged on tier 5 under 20 × L_p to see this; over L_p counts as exceeding the limit.

`lab build` records every problem's report in recipe.json; the build and `lab import` judge each
problem under its recorded L_p (`lab/problems.py`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field

from backend.grading.judge import JudgeTest, Program
from backend.grading.limits import JudgeLimits
from backend.grading.pool import JudgeJob, judge_many
from backend.problems.builtin import get
from backend.records import Judgement, Problem, Test

FLOOR_S = 0.05  # below this, a limit measures the sandbox's start-up as much as the program
REFERENCE_MARGIN = 3.0
MEASURE_LIMIT_S = 2.0  # the generous limit the reference is timed under
SMALL_TIER, LARGE_TIER = 3, 5
BRUTE_TLE_NEEDED = 2
SIZE_FACTOR = 20  # tier 5 should cost a brute force at least this many limits


@dataclass
class Separation:
    problem_id: str
    limit_s: float = 0.0
    reference_cpu_s: float = 0.0  # the largest over all runs and tests
    brute_small_cpu_s: float = 0.0  # the brute force's largest CPU time on tiers <= 3
    brute_small_verdict: str = ""
    brute_large_tle: int = 0  # tier-5 tests on which the brute force exceeded the limit
    brute_large_sized: int = 0  # tier-5 tests on which it needed at least SIZE_FACTOR × the limit
    buggy_fail_tiers: list[int | None] = field(default_factory=list)  # highest WA/RE tier per variant
    # the first failing tier (None: passes every test), what the rewards read; builds before G lack them
    brute_first_fail_tier: int | None = None
    buggy_first_fail_tiers: list[int | None] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)  # why it does not separate

    @property
    def separating(self) -> bool:
        return not self.reasons

    def as_dict(self) -> dict:
        return asdict(self) | {"separating": self.separating}


def limit_from(reference_cpu_s: float) -> float:
    return round(max(FLOOR_S, REFERENCE_MARGIN * reference_cpu_s), 3)


def _cases(tests: Iterable[Test]) -> list[JudgeTest]:
    return [JudgeTest(t.input, t.output) for t in tests]


@dataclass(frozen=True)
class Programs:
    """A problem's reference, brute force and buggy-fast variants (a builtin problem module's)."""

    reference: str
    brute: str
    buggy: tuple[str, ...]


def builtin_programs(problem: Problem) -> Programs:
    module = get(problem.id.split("/", 1)[1]).module
    return Programs(module.REFERENCE, module.BRUTE, tuple(module.BUGGY))


Built = list[tuple[Problem, list[Test]]]


def _judged(jobs: list[JudgeJob], workers: int, progress: bool, desc: str):
    from tqdm import tqdm

    yield from tqdm(judge_many(jobs, workers=workers), total=len(jobs), desc=desc, unit="program", disable=not progress)


def calibrate_limits(
    built: Built, programs: dict[str, Programs], runs: int, workers: int, progress: bool = False
) -> dict[str, Separation]:
    """Each problem's reference timed `runs` times on all its tests; the limit follows from the worst."""
    reports = {p.id: Separation(p.id) for p, _ in built}
    limits = JudgeLimits(time_limit_s=MEASURE_LIMIT_S)
    jobs = [
        JudgeJob((p.id, run), Program(programs[p.id].reference), _cases(tests), limits, run_all=True)
        for p, tests in built
        for run in range(runs)
    ]
    for (pid, _), result in _judged(jobs, workers, progress, "timing references"):
        report = reports[pid]
        report.reference_cpu_s = max(report.reference_cpu_s, result.cpu_s)
        if result.verdict != "AC":
            report.reasons.append(f"the reference gets {result.verdict}")
    for report in reports.values():
        report.limit_s = limit_from(report.reference_cpu_s)
    return reports


def separation(
    built: Built,
    programs: dict[str, Programs] | None = None,
    runs: int = 5,
    workers: int = 2,
    progress: bool = False,
    limits: dict[str, float] | None = None,
) -> list[Separation]:
    """The limit of each problem, then the three checks above under it. `programs`: by problem id
    (default: the builtin problems' own); `limits`: by problem id, judge under these (a build's
    recorded ones) instead of timing the references."""
    programs = programs or {p.id: builtin_programs(p) for p, _ in built}
    if limits is None:
        reports = calibrate_limits(built, programs, runs, workers, progress)
    else:
        reports = {p.id: Separation(p.id, limit_s=limits[p.id]) for p, _ in built}
    jobs = []
    for p, tests in built:
        own, limits_p = programs[p.id], JudgeLimits(time_limit_s=reports[p.id].limit_s, memory_mb=p.memory_limit_mb)
        small = [t for t in tests if t.tier <= SMALL_TIER]
        middle = [t for t in tests if SMALL_TIER < t.tier < LARGE_TIER]  # read only for the first failing tier
        large = [t for t in tests if t.tier == LARGE_TIER]
        jobs.append(JudgeJob((p.id, "brute-small"), Program(own.brute), _cases(small), limits_p, run_all=True))
        if middle:
            jobs.append(JudgeJob((p.id, "brute-middle"), Program(own.brute), _cases(middle), limits_p, run_all=True))
        wide = JudgeLimits(time_limit_s=SIZE_FACTOR * limits_p.time_limit_s, memory_mb=p.memory_limit_mb)
        jobs.append(JudgeJob((p.id, "brute-large"), Program(own.brute), _cases(large), wide, run_all=True))
        jobs += [
            JudgeJob((p.id, f"buggy-{i}"), Program(src), _cases(tests), limits_p, run_all=True)
            for i, src in enumerate(own.buggy)
        ]
    results: dict[tuple[str, str], Judgement] = dict(_judged(jobs, workers, progress, "separation"))
    for p, _ in built:
        _judge_separation(reports[p.id], results, [key for key in results if key[0] == p.id])
    return sorted(reports.values(), key=lambda r: r.problem_id)


def _judge_separation(report: Separation, results: dict, keys: list) -> None:
    small = results[(report.problem_id, "brute-small")]
    report.brute_small_verdict = small.verdict
    report.brute_small_cpu_s = small.cpu_s
    if small.verdict != "AC":
        report.reasons.append(f"the brute force gets {small.verdict} on tiers <= {SMALL_TIER}")
    elif small.cpu_s > report.limit_s / 3:
        report.reasons.append(f"the brute force needs {small.cpu_s:.3f} s on tiers <= {SMALL_TIER} (> L/3)")
    large = results[(report.problem_id, "brute-large")]
    # judged under SIZE_FACTOR × L: over L is a TLE at L, a TLE here needed SIZE_FACTOR × L
    report.brute_large_tle = sum(t.verdict == "TLE" or t.cpu_s > report.limit_s for t in large.test_results)
    report.brute_large_sized = sum(t.verdict == "TLE" for t in large.test_results)
    if report.brute_large_tle < BRUTE_TLE_NEEDED:
        report.reasons.append(f"the brute force exceeds L on {report.brute_large_tle} tier-{LARGE_TIER} tests")
    middle = results.get((report.problem_id, "brute-middle"))
    brute = [*small.test_results, *(middle.test_results if middle else []), *large.test_results]
    report.brute_first_fail_tier = first_failing_tier(brute, report.limit_s)
    for key in sorted((k for k in keys if k[1].startswith("buggy-")), key=lambda k: int(k[1].split("-")[1])):
        failed = [t.tier for t in results[key].test_results if t.verdict in ("WA", "RE")]  # wrong, not slow
        report.buggy_fail_tiers.append(max(failed) if failed else None)
        report.buggy_first_fail_tiers.append(first_failing_tier(results[key].test_results))
    if not any(tier is not None and tier >= SMALL_TIER for tier in report.buggy_fail_tiers):
        report.reasons.append(f"no buggy-fast variant fails a test of tier >= {SMALL_TIER}")


def _tiers(tiers: list[int | None]) -> str:
    return ", ".join("-" if t is None else str(t) for t in tiers)


def _told(report: Separation, reward: str) -> str:
    return ", ".join("yes" if told else "no" for told in told_apart(report, reward))


def first_failing_tier(tests: list, limit_s: float | None = None) -> int | None:
    """The lowest tier of a test that fails (any verdict but AC, or, with `limit_s`, a CPU time over
    it: the brute force's tier-5 tests are judged under 20 L_p); None if every test passes."""
    failed = [t.tier for t in tests if t.verdict != "AC" or (limit_s is not None and t.cpu_s > limit_s)]
    return min(failed, default=None)


def pays(first_fail_tier: int | None, reward: str) -> bool:
    """Whether a binary reward pays a program that first fails at this tier: R_k pays iff no test of
    tier <= k fails (tier t holds the inputs of 10^(t-1) to 10^t - 1 characters), R_inf iff none fails."""
    if first_fail_tier is None:
        return True
    return reward != "R_inf" and first_fail_tier > int(reward.removeprefix("R_"))


def told_apart(report: Separation | dict, reward: str) -> list[bool]:
    """Per buggy-fast variant: whether `reward` scores it differently from the brute force."""
    r = report if isinstance(report, dict) else report.as_dict()
    brute = pays(r["brute_first_fail_tier"], reward)
    return [pays(tier, reward) != brute for tier in r["buggy_first_fail_tiers"]]


def to_markdown(reports: list[Separation]) -> str:
    rows = [
        "| problem | L_p | brute, tiers ≤ 3 | tier-5 tests over L_p | over 20 L_p | buggy fails up to tier | "
        "first failing tier: brute / buggy | told from the brute force by R_3 / R_inf | separates |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in reports:
        rows.append(
            f"| {r.problem_id} | {r.limit_s:.3f} s | {r.brute_small_verdict} {r.brute_small_cpu_s:.3f} s | "
            f"{r.brute_large_tle} | {r.brute_large_sized} | {_tiers(r.buggy_fail_tiers)} | "
            f"{_tiers([r.brute_first_fail_tier])} / {_tiers(r.buggy_first_fail_tiers)} | "
            f"{_told(r, 'R_3')} / {_told(r, 'R_inf')} | "
            f"{'yes' if r.separating else 'no: ' + '; '.join(r.reasons)} |"
        )
    separating = sum(r.separating for r in reports)
    sized = sum(r.brute_large_sized >= BRUTE_TLE_NEEDED for r in reports)
    rows.append(
        f"\n{separating} of {len(reports)} separate; on {sized}, the brute force needs {SIZE_FACTOR} × L_p "
        f"on at least {BRUTE_TLE_NEEDED} tier-5 tests."
    )
    return "\n".join(rows)
