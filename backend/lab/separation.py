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
- **Sized** (reported, not required): the tier-5 tests on which the brute force needs at least
  20 × L_p, so a slow program fails there by a wide margin, not by a noisy one. The brute force is
  judged on tier 5 under 20 × L_p to see this; over L_p counts as exceeding the limit.

`lab build` records every problem's report in recipe.json; the build and `lab import` judge each
problem under its recorded L_p (`lab/problems.py`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field

from backend.grading.judge import JudgeResult, JudgeTest, Program
from backend.grading.limits import JudgeLimits
from backend.grading.pool import JudgeJob, judge_many
from backend.problems.builtin import get
from backend.records import Problem, Test

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
    buggy_fail_tiers: list[int | None] = field(default_factory=list)  # highest failing tier per variant
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
    built: Built, programs: dict[str, Programs] | None = None, runs: int = 5, workers: int = 2, progress: bool = False
) -> list[Separation]:
    """The limit of each problem, then the three checks above under it. `programs`: by problem id
    (default: the builtin problems' own)."""
    programs = programs or {p.id: builtin_programs(p) for p, _ in built}
    reports = calibrate_limits(built, programs, runs, workers, progress)
    jobs = []
    for p, tests in built:
        own, limits = programs[p.id], JudgeLimits(time_limit_s=reports[p.id].limit_s, memory_mb=p.memory_limit_mb)
        small = [t for t in tests if t.tier <= SMALL_TIER]
        large = [t for t in tests if t.tier == LARGE_TIER]
        jobs.append(JudgeJob((p.id, "brute-small"), Program(own.brute), _cases(small), limits, run_all=True))
        wide = JudgeLimits(time_limit_s=SIZE_FACTOR * limits.time_limit_s, memory_mb=p.memory_limit_mb)
        jobs.append(JudgeJob((p.id, "brute-large"), Program(own.brute), _cases(large), wide, run_all=True))
        jobs += [
            JudgeJob((p.id, f"buggy-{i}"), Program(src), _cases(tests), limits, run_all=True)
            for i, src in enumerate(own.buggy)
        ]
    results: dict[tuple[str, str], JudgeResult] = dict(_judged(jobs, workers, progress, "separation"))
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
    report.brute_large_tle = sum(t.verdict == "TLE" or t.cpu_s > report.limit_s for t in large.tests)
    report.brute_large_sized = sum(t.verdict == "TLE" for t in large.tests)
    if report.brute_large_tle < BRUTE_TLE_NEEDED:
        report.reasons.append(f"the brute force exceeds L on {report.brute_large_tle} tier-{LARGE_TIER} tests")
    for key in sorted(k for k in keys if k[1].startswith("buggy-")):
        failed = [t.tier for t in results[key].tests if t.verdict in ("WA", "RE")]  # wrong, not slow
        report.buggy_fail_tiers.append(max(failed) if failed else None)
    if not any(tier is not None and tier >= SMALL_TIER for tier in report.buggy_fail_tiers):
        report.reasons.append(f"no buggy-fast variant fails a test of tier >= {SMALL_TIER}")


def to_markdown(reports: list[Separation]) -> str:
    rows = ["| problem | L_p | brute, tiers ≤ 3 | tier-5 tests over L_p | over 20 L_p | buggy fails up to tier | separates |",
            "|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in reports:
        tiers = ", ".join("-" if t is None else str(t) for t in r.buggy_fail_tiers)
        rows.append(f"| {r.problem_id} | {r.limit_s:.3f} s | {r.brute_small_verdict} {r.brute_small_cpu_s:.3f} s | "
                    f"{r.brute_large_tle} | {r.brute_large_sized} | {tiers} | "
                    f"{'yes' if r.separating else 'no: ' + '; '.join(r.reasons)} |")  # fmt: skip
    separating = sum(r.separating for r in reports)
    sized = sum(r.brute_large_sized >= BRUTE_TLE_NEEDED for r in reports)
    rows.append(f"\n{separating} of {len(reports)} separate; on {sized}, the brute force needs {SIZE_FACTOR} × L_p "
                f"on at least {BRUTE_TLE_NEEDED} tier-5 tests.")  # fmt: skip
    return "\n".join(rows)
