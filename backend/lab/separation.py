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

Not yet wired into `lab build`: the committed lab was judged under one limit for every problem
(0.1 s), and the next build is where per-problem limits and the separating subset come in.
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


@dataclass
class Separation:
    problem_id: str
    limit_s: float = 0.0
    reference_cpu_s: float = 0.0  # the largest over all runs and tests
    brute_small_cpu_s: float = 0.0  # the brute force's largest CPU time on tiers <= 3
    brute_small_verdict: str = ""
    brute_large_tle: int = 0  # tier-5 tests on which the brute force exceeded the limit
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


def calibrate_limits(built: Built, programs: dict[str, Programs], runs: int, workers: int) -> dict[str, Separation]:
    """Each problem's reference timed `runs` times on all its tests; the limit follows from the worst."""
    reports = {p.id: Separation(p.id) for p, _ in built}
    limits = JudgeLimits(time_limit_s=MEASURE_LIMIT_S)
    jobs = [
        JudgeJob((p.id, run), Program(programs[p.id].reference), _cases(tests), limits, run_all=True)
        for p, tests in built
        for run in range(runs)
    ]
    for (pid, _), result in judge_many(jobs, workers=workers):
        report = reports[pid]
        report.reference_cpu_s = max(report.reference_cpu_s, result.cpu_s)
        if result.verdict != "AC":
            report.reasons.append(f"the reference gets {result.verdict}")
    for report in reports.values():
        report.limit_s = limit_from(report.reference_cpu_s)
    return reports


def separation(
    built: Built, programs: dict[str, Programs] | None = None, runs: int = 5, workers: int = 2
) -> list[Separation]:
    """The limit of each problem, then the three checks above under it. `programs`: by problem id
    (default: the builtin problems' own)."""
    programs = programs or {p.id: builtin_programs(p) for p, _ in built}
    reports = calibrate_limits(built, programs, runs, workers)
    jobs = []
    for p, tests in built:
        own, limits = programs[p.id], JudgeLimits(time_limit_s=reports[p.id].limit_s, memory_mb=p.memory_limit_mb)
        small = [t for t in tests if t.tier <= SMALL_TIER]
        large = [t for t in tests if t.tier == LARGE_TIER]
        jobs.append(JudgeJob((p.id, "brute-small"), Program(own.brute), _cases(small), limits, run_all=True))
        jobs.append(JudgeJob((p.id, "brute-large"), Program(own.brute), _cases(large), limits, run_all=True))
        jobs += [
            JudgeJob((p.id, f"buggy-{i}"), Program(src), _cases(tests), limits, run_all=True)
            for i, src in enumerate(own.buggy)
        ]
    results: dict[tuple[str, str], JudgeResult] = dict(judge_many(jobs, workers=workers))
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
    report.brute_large_tle = sum(t.verdict == "TLE" for t in large.tests)
    if report.brute_large_tle < BRUTE_TLE_NEEDED:
        report.reasons.append(f"the brute force exceeds L on {report.brute_large_tle} tier-{LARGE_TIER} tests")
    for key in sorted(k for k in keys if k[1].startswith("buggy-")):
        failed = [t.tier for t in results[key].tests if t.verdict in ("WA", "RE")]  # wrong, not slow
        report.buggy_fail_tiers.append(max(failed) if failed else None)
    if not any(tier is not None and tier >= SMALL_TIER for tier in report.buggy_fail_tiers):
        report.reasons.append(f"no buggy-fast variant fails a test of tier >= {SMALL_TIER}")
