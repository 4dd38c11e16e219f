"""The judging load of a real study, measured: programs per core-second on a realistic mix, through
the local pool and through Ray in the same run, and what a study at the paper's size needs.

The workload (SYNTHETIC programs and tests, judged for real: bwrap, a cgroup per sandbox):
- problems in LiveCodeBench's style: stdin, "print the sum of n numbers", 60 tests each, 12 per
  input-length tier t = 1..5 (10^(t-1) to 10^t characters, so up to ~100 kB), judged as an
  imported LCB problem is: LCB's checker after its import block, 6 s of CPU and 1024 MB per test
  (backend/problems/lcb.py), the first failing test decides (as a sweep judges);
- one program per (verdict, first failing tier) that the committed lab shows at α = 0 and α = 1.5
  (artifacts/lab/results, 640 evaluations at each α), in the lab's shares: AC; WA from tier t (t = 1:
  at the first test, else late); TLE from tier t (a busy loop: a full time limit of CPU); RE and
  MLE from tier t; CE (does not parse); FORMAT (no program extracted: never reaches a sandbox).

What it prints:
1. CPU-seconds per program of each kind, judged one at a time in this process (the judge's host
   side plus the sandbox's cgroup counter), and per outcome class at each α's shares;
2. each α's mix judged by the local pool of W workers and by Ray (the project's own local cluster
   on 127.0.0.1 with W CPUs, or --ray-address), rounds alternating between them, the programs
   submitted longest first (so a round ends with little idle time, as a long study's steady state);
   programs per core-second = programs / (wall seconds × cores), and Ray's core-seconds per program
   as a ratio to the pool's in the same round (median of the rounds);
3. the sizing table of docs/scaling.md: core-hours and the CPUs for a 1-hour judge of a 9-α
   LiveCodeBench v5 sweep at n = 16 (880 problems: 126,720 programs) and of the paper's pass@250
   study (340,000 programs) at each α's mix, from the CPU-seconds per program and from the pool's
   measured programs per core-second (which, on a shared machine, also counts the cores the
   load took).

    .venv/bin/python bench/judge_scale.py [--programs 32] [--rounds 3] [--ray-address ADDR] [--json OUT]
    .venv/bin/python bench/judge_scale.py --smoke   # the tests' size: checks the script, not the figures
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.alpha import alpha_label
from backend.grading.judge import JudgeTest, Program
from backend.grading.limits import JudgeLimits
from backend.grading.pool import JudgeJob, run_job
from backend.outcomes import VERDICT_OUTCOME, Verdict
from backend.records import tier_of
from backend.sandbox import session

ROOT = Path(__file__).resolve().parent.parent
LAB = ROOT / "artifacts" / "lab" / "results"
ALPHAS = (0.0, 1.5)
TIERS = 5
STUDIES = {"9-α LCB v5 sweep, n = 16 (880 problems)": 880 * 16 * 9, "pass@250 study (the paper's)": 340_000}
ORDER = {"TLE": 0, "MLE": 1, "AC": 2, "WA": 3, "RE": 4, "CE": 5, "FORMAT": 6}  # longest first


@dataclass(frozen=True)
class Kind:
    verdict: str
    tier: int | None = None  # the first failing test's tier (WA, TLE, RE, MLE)

    @property
    def label(self) -> str:
        return self.verdict if self.tier is None else f"{self.verdict}@{self.tier}"

    @property
    def outcome(self) -> str:
        return str(VERDICT_OUTCOME[Verdict(self.verdict)])


def source(kind: Kind, memory_mb: int) -> str | None:
    """A program of this kind: right until its input reaches tier `kind.tier`, then its verdict."""
    read, answer = "import sys\ndata = sys.stdin.read()\nnums = data.split()\n", "print(sum(map(int, nums[1:])))\n"
    gate = f"len(data) >= {10 ** ((kind.tier or 1) - 1)}"
    return {
        "AC": read + answer,
        "WA": read + f"print(sum(map(int, nums[1:])) + ({gate}))\n",
        "TLE": read + f"while {gate}:\n    pass\n" + answer,
        "RE": read + f"if {gate}:\n    raise ValueError('bad input')\n" + answer,
        "MLE": read + f"if {gate}:\n    hog = bytearray({2 * memory_mb} << 20)\n" + answer,
        "CE": "def solve(:\n    pass\n",
        "FORMAT": None,
    }[kind.verdict]


def lab_shares() -> dict[float, dict[Kind, int]]:
    """Evaluations of each (verdict, first failing tier) at α = 0 and 1.5 in the committed lab."""
    import duckdb

    rows = duckdb.sql(f"""
        SELECT c.alpha, e.verdict, e.first_failing_tier, count(*)
        FROM '{LAB / "evaluations.parquet"}' e JOIN '{LAB / "checkpoints.parquet"}' c ON c.id = e.checkpoint_id
        WHERE c.alpha IN {ALPHAS} AND e.verdict <> 'SE' GROUP BY ALL""").fetchall()
    shares: dict[float, dict[Kind, int]] = {a: {} for a in ALPHAS}
    for alpha, verdict, tier, n in rows:
        kind = Kind(verdict, tier if verdict in ("WA", "TLE", "RE", "MLE") else None)
        shares[alpha][kind] = shares[alpha].get(kind, 0) + n
    return shares


def make_tests(seed: int, per_tier: int) -> list[JudgeTest]:
    """`per_tier` tests in each tier, their lengths spread evenly on a log scale within it."""
    rng, tests = random.Random(seed), []
    for tier in range(1, TIERS + 1):
        low, high = (4, 8) if tier == 1 else (10 ** (tier - 1), 0.8 * 10**tier)
        for j in range(per_tier):
            target = low * (high / low) ** (j / max(1, per_tier - 1))
            nums: list[int] = []
            size = 2  # the count's line and the final newline, counted as the numbers are drawn
            while size + len(str(len(nums))) < target:
                nums.append(rng.randrange(1, 10 if tier == 1 else 100))
                size += len(str(nums[-1])) + (len(nums) > 1)
            text = f"{len(nums)}\n{' '.join(map(str, nums))}\n"
            assert tier_of(len(text)) == tier, (tier, len(text))
            tests.append(JudgeTest(text, f"{sum(nums)}\n"))
    return tests


def job(key, kind: Kind, tests: list[JudgeTest], limits: JudgeLimits) -> JudgeJob:
    code = source(kind, limits.memory_mb)
    return JudgeJob(
        key, Program(code) if code else None, tests, limits, "lcb", format_reason="no code block in the completion"
    )


def check(kind: Kind, result) -> None:
    """The bench measures what it says: each program's verdict is its kind's."""
    got = Kind(result.verdict, result.first_failing_tier if kind.tier is not None else None)
    if got != kind:
        raise SystemExit(f"a {kind.label} program was judged {got.label}: the workload is not what it claims")


def cpu_now() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime + session.SANDBOX_CPU["cpu_s"]


def cost_by_kind(kinds: list[Kind], tests, limits, repeat: int) -> dict[Kind, float]:
    """CPU-seconds of one program of each kind, judged in this process (median of `repeat`)."""
    costs, cut = {}, 0
    for kind in kinds:
        spent = []
        for _ in range(repeat):
            before = cpu_now()
            result = run_job(job(kind.label, kind, tests, limits))[1]
            spent.append(cpu_now() - before)
            check(kind, result)
            if kind.verdict == "TLE":
                failed = result.first_failure
                cut += failed.cpu_s < limits.time_limit_s
        costs[kind] = statistics.median(spent)
        print(f"    {kind.label:8} {costs[kind]:7.3f} CPU-s", flush=True)
    if cut:  # the backstop stops a program that waited long for a CPU: a busy machine's TLE costs less
        print(f"    {cut} TLE program(s) were stopped by the wall backstop before their CPU limit (a busy machine):")
        print("    on dedicated cores each TLE costs at least its limit, so these figures are low")
    return costs


def the_mix(shares: dict[Kind, int], programs: int) -> list[Kind]:
    """`programs` programs in the lab's shares (largest remainder), longest first."""
    total = sum(shares.values())
    exact = {k: programs * n / total for k, n in shares.items()}
    counts = {k: int(v) for k, v in exact.items()}
    for k in sorted(exact, key=lambda k: counts[k] - exact[k])[: programs - sum(counts.values())]:
        counts[k] += 1
    kinds = [k for k, n in counts.items() for _ in range(n)]
    return sorted(kinds, key=lambda k: (ORDER[k.verdict], -(k.tier or 0)))


@dataclass
class Judging:
    """A sweep's executor, as the jobs stage drives its judging: submit every job, collect until none is pending."""

    name: str
    executor: object  # LocalExecutor or RayExecutor
    cores: int
    ray: object = None  # the Ray session this bench started or joined, shut down at close

    def judge(self, jobs: list[JudgeJob]) -> list:
        self.executor.judging.submit(jobs)
        done = []
        while self.executor.judging.pending:
            done += self.executor.judging.collect(block=True)
        return done

    def close(self) -> None:
        self.executor.close()
        if self.ray is not None:
            self.ray.shutdown()


def local_pool(workers: int) -> Judging:
    from backend.sweep.executors import LocalExecutor

    return Judging("local pool", LocalExecutor("transformers", judge_workers=workers), workers)


def on_ray(address: str | None, workers: int) -> Judging:
    from backend.sweep.executors import connect_ray
    from backend.sweep.pool import RayExecutor

    if address is None:  # the project's own local cluster on 127.0.0.1, with the pool's cores
        os.environ["RAY_OVERRIDE_RESOURCES"] = json.dumps({"CPU": workers})
        ray = connect_ray(None, _temp_dir=tempfile.mkdtemp(prefix="fjs-", dir="/tmp"))
    else:
        ray = connect_ray(address)
    return Judging("Ray", RayExecutor("transformers", address), int(ray.cluster_resources().get("CPU", 0)), ray)


def timed(executor, jobs: list[JudgeJob], kinds: dict) -> float:
    start = time.perf_counter()
    results = executor.judge(jobs)
    wall = time.perf_counter() - start
    assert len(results) == len(jobs)
    for key, result in results:
        check(kinds[key], result)
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", type=int, default=32, help="programs in each α's mix")
    parser.add_argument("--problems", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=os.cpu_count(), help="the pool's workers, the cluster's CPUs")
    parser.add_argument("--time-limit", type=float, default=6.0, help="CPU seconds per test (LCB's: 6)")
    parser.add_argument("--memory-mb", type=int, default=1024, help="memory per test (LCB problems': 1024)")
    parser.add_argument("--tests-per-tier", type=int, default=12)
    parser.add_argument("--ray-address", help="judge on this running cluster instead of a local one")
    parser.add_argument("--smoke", action="store_true", help="the tests' size (1 problem, small limits, 1 round)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.smoke:
        args.programs, args.problems, args.rounds, args.tests_per_tier = 6, 1, 1, 2
        args.time_limit, args.memory_mb = 0.3, 64  # an MLE reaches 64 MB well within 0.3 s of CPU
    limits = JudgeLimits(time_limit_s=args.time_limit, memory_mb=args.memory_mb)
    problems = [make_tests(seed, args.tests_per_tier) for seed in range(args.problems)]
    shares = lab_shares()
    load = [os.getloadavg()[0]]
    print(f"judge scale: {args.problems} problems x {len(problems[0])} LCB-style tests (tiers 1-{TIERS}), "
          f"{args.time_limit:g} s CPU and {args.memory_mb} MB per test, bwrap; {os.cpu_count()} cores, "
          f"load average {load[0]:.1f}")  # fmt: skip
    for alpha in ALPHAS:
        total = sum(shares[alpha].values())
        cells = ", ".join(f"{k.label} {100 * n / total:.1f}%" for k, n in sorted(shares[alpha].items(), key=str))
        print(f"  the lab's mix at {alpha_label(alpha)} ({total} evaluations): {cells}")

    kinds = sorted({k for s in shares.values() for k in s} | {Kind("MLE", TIERS), Kind("WA", 1)}, key=str)
    print("CPU-seconds per program (host + sandbox, one at a time in this process):")
    costs = cost_by_kind(kinds, problems[0], limits, 1 if args.smoke else 2)
    by_class = {}
    for alpha in ALPHAS:
        classes: dict[str, list[float]] = {}
        for kind, n in shares[alpha].items():
            classes.setdefault(kind.outcome, []).extend([costs[kind]] * n)
        by_class[alpha] = {c: statistics.fmean(v) for c, v in classes.items()}
        mean = sum(costs[k] * n for k, n in shares[alpha].items()) / sum(shares[alpha].values())
        by_class[alpha]["all"] = mean
        row = ", ".join(f"{c} {v:.3f}" for c, v in by_class[alpha].items() if c != "all")
        print(f"  {alpha_label(alpha)}, by outcome class: {row}; the mix {mean:.3f} CPU-s per program")

    mixes = {a: the_mix(shares[a], args.programs) for a in ALPHAS}
    warm = [job(("warm", i), Kind("AC"), problems[0][:3], limits) for i in range(2 * args.workers)]
    executors = []
    for start in (lambda: local_pool(args.workers), lambda: on_ray(args.ray_address, args.workers)):
        executors.append(start())  # the pool's workers are forked before Ray starts its threads here
        executors[-1].judge(warm)  # worker processes started and imports done before any timing
    rounds = []
    for r in range(args.rounds):
        row = {}
        for alpha, mix in mixes.items():
            keyed = {(alpha, i): kind for i, kind in enumerate(mix)}
            jobs = [job(key, kind, problems[key[1] % len(problems)], limits) for key, kind in keyed.items()]
            for executor in executors if r % 2 == 0 else executors[::-1]:
                wall = timed(executor, jobs, keyed)
                row[(alpha, executor.name)] = {"wall": wall, "per_core_s": len(jobs) / (wall * executor.cores)}
                print(f"  round {r + 1}, {alpha_label(alpha)}, {executor.name}: {wall:.1f} s", flush=True)
            # Ray's core-seconds per program over the pool's
            row[(alpha, "ratio")] = row[(alpha, "local pool")]["per_core_s"] / row[(alpha, "Ray")]["per_core_s"]
        rounds.append(row)
    for executor in executors:
        executor.close()
    load.append(os.getloadavg()[0])

    summary = {"args": vars(args) | {"json": str(args.json)}, "load_avg_1m": load, "cpu_s_per_program": {},
               "by_class": {str(a): v for a, v in by_class.items()}, "throughput": {}, "sizing": {}}  # fmt: skip
    summary["cpu_s_per_program"] = {k.label: v for k, v in costs.items()}
    print(f"throughput, each α's mix of {args.programs} programs ({args.rounds} rounds, median; "
          f"pool {executors[0].cores} workers, Ray {executors[1].cores} CPUs):")  # fmt: skip
    for alpha in ALPHAS:
        pool = statistics.median(r[(alpha, "local pool")]["per_core_s"] for r in rounds)
        ray = statistics.median(r[(alpha, "Ray")]["per_core_s"] for r in rounds)
        ratio = statistics.median(r[(alpha, "ratio")] for r in rounds)
        every = ", ".join(f"{r[(alpha, 'ratio')]:.2f}" for r in rounds)
        summary["throughput"][str(alpha)] = {"local_pool": pool, "ray": ray, "ray_over_pool": ratio}
        print(f"  {alpha_label(alpha)}: local pool {pool:.3f} programs per core-second, Ray {ray:.3f}; "
              f"Ray's core-seconds per program / the pool's: {ratio:.2f}x (rounds: {every})")  # fmt: skip
    print("sizing (core-hours; CPUs for a 1-hour judge), from the judge's CPU-seconds per program (the CPUs")
    print("must deliver at least that) and from this run's programs per core-second (the pool's losses and this")
    print("machine's load included):")
    print("| study | programs | from | " + " | ".join(f"{alpha_label(a)} mix" for a in ALPHAS) + " |")
    print("|---|---|---|" + "---|" * len(ALPHAS))
    per_program = {
        "CPU-seconds per program": {a: by_class[a]["all"] for a in ALPHAS},
        "the local pool's programs per core-second": {
            a: 1 / summary["throughput"][str(a)]["local_pool"] for a in ALPHAS
        },
    }
    for study, programs in STUDIES.items():
        for basis, seconds in per_program.items():
            hours = {a: programs * seconds[a] / 3600 for a in ALPHAS}
            summary["sizing"][f"{study}, from {basis}"] = hours
            cells = [f"{hours[a]:,.0f} core-hours; {math.ceil(hours[a])} CPUs" for a in ALPHAS]
            print(f"| {study} | {programs:,} | {basis} | " + " | ".join(cells) + " |")
    print(f"load average (1 min): {load[0]:.1f} at the start, {load[1]:.1f} at the end, on {os.cpu_count()} cores")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2, default=str))


if __name__ == "__main__":
    main()
