"""Check each builtin problem's calibration claims through the real judge:

- the reference passes every test with at least 2x CPU-time headroom;
- the brute force passes every test of tier <= 3, and gets TLE or MLE on tier 6;
- every buggy variant gets WA or RE somewhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from backend.grading.judge import JudgeTest, Program
from backend.grading.limits import JudgeLimits
from backend.grading.pool import JudgeJob, judge_many
from backend.problems.builtin import get
from backend.records import Problem, Test


@dataclass
class Calibration:
    problem_id: str
    failures: list[str] = field(default_factory=list)
    ref_max_cpu_s: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failures


def _jobs(problem: Problem, tests: list[Test]) -> list[JudgeJob]:
    module = get(problem.id.split("/", 1)[1]).module
    limits = JudgeLimits(time_limit_s=problem.time_limit_s, memory_mb=problem.memory_limit_mb)
    cases = {t.idx: JudgeTest(t.input, t.output) for t in tests}
    small = [cases[t.idx] for t in tests if t.tier <= 3]
    big = [cases[t.idx] for t in tests if t.tier == 6]
    jobs = [
        JudgeJob((problem.id, "reference"), Program(module.REFERENCE), list(cases.values()), limits, run_all=True),
        JudgeJob((problem.id, "brute<=3"), Program(module.BRUTE), small, limits),
        JudgeJob((problem.id, "brute@6"), Program(module.BRUTE), big[-1:], limits),  # the largest input
    ]
    jobs += [
        JudgeJob((problem.id, f"buggy{i}"), Program(src), list(cases.values()), limits)
        for i, src in enumerate(module.BUGGY)
    ]
    return jobs


def calibrate(built: list[tuple[Problem, list[Test]]], workers: int = 2) -> list[Calibration]:
    reports = {p.id: Calibration(p.id) for p, _ in built}
    limits = {p.id: p.time_limit_s for p, _ in built}
    jobs = [job for p, tests in built for job in _jobs(p, tests)]
    for (pid, role), result in judge_many(jobs, workers=workers):
        report = reports[pid]
        if role == "reference":
            report.ref_max_cpu_s = result.cpu_s
            if result.verdict != "AC":
                report.failures.append(f"reference gets {result.verdict}")
            elif result.cpu_s > limits[pid] / 2:
                report.failures.append(f"reference uses {result.cpu_s:.2f}s of a {limits[pid]}s limit (< 2x headroom)")
        elif role == "brute<=3" and result.verdict != "AC":
            report.failures.append(f"brute force gets {result.verdict} on tiers <= 3")
        elif role == "brute@6" and result.verdict not in ("TLE", "MLE"):
            report.failures.append(f"brute force gets {result.verdict} on tier 6 (want TLE or MLE)")
        elif role.startswith("buggy") and result.verdict not in ("WA", "RE"):
            report.failures.append(f"{role} gets {result.verdict} (want WA or RE)")
    return sorted(reports.values(), key=lambda r: r.problem_id)


@dataclass
class Agreement:
    """How often our verdict agrees with a dataset's own label of a submission."""

    per_problem: dict[str, tuple[int, int]] = field(default_factory=dict)  # id -> (agreeing, judged)
    disagreements: list[tuple[str, bool, str]] = field(default_factory=list)  # (id, labelled correct, our verdict)
    skipped_languages: dict[str, int] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        agree = sum(a for a, _ in self.per_problem.values())
        total = sum(n for _, n in self.per_problem.values())
        return agree / total if total else float("nan")


def calibrate_ccplus(
    store, path, sample: int = 20, per_problem: int = 5, config: str = "1x", seed: int = 0, workers: int = 2
) -> Agreement:
    """For a seeded sample of stored CodeContests+ problems: up to `per_problem` correct and as many
    incorrect submissions each (in the languages we judge), judged with the problem's own checker
    and limits. A correct submission must get AC; an incorrect one must not."""
    import random

    from backend.errors import UserError
    from backend.grading.judge import judge_setup
    from backend.problems import ccplus

    problems = {p.id: p for p in store.select(Problem, {"bench": ccplus.BENCH}) if not p.judge_error}
    if not problems:
        raise UserError("no judgeable CodeContests+ problems stored; run `problems import ccplus` first")
    ids = ccplus.sample_ids(list(problems), sample, seed)
    found = ccplus.submissions(path, set(ids), config)
    report = Agreement()
    jobs = []
    rng = random.Random(seed)
    for pid in ids:
        subs = found.get(pid, ccplus.Submissions())
        for lang, n in subs.skipped.items():
            report.skipped_languages[str(lang)] = report.skipped_languages.get(str(lang), 0) + n
        tests = [JudgeTest(t.input, t.output) for t in store.select(Test, {"problem_id": pid})]
        setup = judge_setup(problems[pid])
        for correct in (True, False):
            pool = [s for s in subs.kept if s.correct is correct]
            for s in rng.sample(pool, min(per_problem, len(pool))):
                job = JudgeJob((pid, correct), Program(s.code, s.language), tests, setup.limits, setup.checker)
                jobs.append(job)
    for (pid, correct), result in judge_many(jobs, workers=workers):
        agree, total = report.per_problem.get(pid, (0, 0))
        ok = (result.verdict == "AC") == correct
        report.per_problem[pid] = (agree + ok, total + 1)
        if not ok:
            report.disagreements.append((pid, correct, result.verdict))
    return report
