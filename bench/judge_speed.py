"""Judge speed: our marginal cost per test against LiveCodeBench's own grader, in the same run.

The workload of issue #32: a tiny Python sum program; test inputs of 10 to 10^5 characters
(100 lengths spaced evenly on a log scale, repeated). The marginal cost per test is
(time for 1,100 tests - time for 100 tests) / 1,000, so what is paid once per program (our
sandbox's start and teardown, LCB's worker process) drops out and the same input lengths count
on both sides. Ours is one `judge()` call: bwrap, a cgroup per sandbox, per-test caps. With
FLAB_LCB_REPO naming a LiveCodeBench checkout, LCB's `check_correctness` (in-process, no
isolation, no accounting, its import block run once per program) judges the same program on the
same tests, and the ratio is printed.

`--checker exact` (the default, #32's workload) judges the program as a builtin problem's;
`--checker lcb` as an imported LiveCodeBench problem's: after LCB's import block (run once per
program in the sandbox), with LCB's output comparison, which is what LCB's grader does too.

Each round judges ours and LCB's alternately (few then many tests), the order flipped every other
round, so both see the same machine load; the median round is reported with every round. Besides
the wall clock (the figure the target is on), each side's CPU time per test is printed: ours is
this process's (the judge's host side) plus every sandbox's cgroup counter, LCB's its worker
process's (`RUSAGE_CHILDREN`). CPU time moves less with other processes' load than the wall clock.

    FLAB_LCB_REPO=/path/to/LiveCodeBench .venv/bin/python bench/judge_speed.py \
        [--rounds 5] [--checker exact|lcb] [--json OUT]

The JSON also has our per-test phases (host side, marginal as above): setup (the last test's
cleanup awaited, input staged, memory admitted, cgroup armed), run (the launcher's fork, run and wait, one round trip),
teardown (usage read, output read) and judge (the judge's own work: checking, bookkeeping).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.grading.judge import JudgeTest, Program, judge
from backend.grading.limits import JudgeLimits
from backend.sandbox import session

SOURCE = "import sys\ndata = sys.stdin.read().split()\nprint(sum(map(int, data[1:])))\n"
LENGTHS = [round(10 * 10 ** (4 * j / 99)) for j in range(100)]  # 10 .. 100,000 characters
FEW, MANY = 100, 1100


def make_test(length: int, rng: random.Random) -> JudgeTest:
    """`n` then n numbers, padded to about `length` characters."""
    nums: list[int] = []
    size = 2
    while size < length - 2:
        nums.append(rng.randrange(1, 100))
        size += len(str(nums[-1])) + 1
    text = f"{len(nums)}\n{' '.join(map(str, nums))}\n"
    return JudgeTest(text, f"{sum(nums)}\n")


def make_tests(n: int) -> list[JudgeTest]:
    rng = random.Random(0)
    distinct = [make_test(length, rng) for length in LENGTHS]
    return [distinct[i % len(distinct)] for i in range(n)]


def cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def ours(tests: list[JudgeTest], checker: str) -> dict:
    before, sandbox_before, host_before = session.PHASES.copy(), session.SANDBOX_CPU["cpu_s"], cpu(resource.RUSAGE_SELF)
    start = time.perf_counter()
    result = judge(Program(SOURCE), tests, JudgeLimits(), checker, backend="bwrap")
    elapsed = time.perf_counter() - start
    assert result.verdict == "AC" and len(result.test_results) == len(tests), result.verdict
    assert result.accounting.startswith("cgroup"), f"no cgroup accounting here: {result.accounting}"
    phases = session.PHASES.copy()
    phases.subtract(before)
    host, sandbox = cpu(resource.RUSAGE_SELF) - host_before, session.SANDBOX_CPU["cpu_s"] - sandbox_before
    return {"wall": elapsed, "cpu": host + sandbox, "phases": dict(phases)}


def lcb_grader():
    repo = os.environ.get("FLAB_LCB_REPO")
    if not repo:
        return None
    sys.path.insert(0, repo)
    from lcb_runner.evaluation.compute_code_generation_metrics import check_correctness

    return check_correctness


def lcb(check_correctness, tests: list[JudgeTest]) -> dict:
    sample = {"input_output": json.dumps({"inputs": [t.input for t in tests], "outputs": [t.output for t in tests]})}
    cpu_before = cpu(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    results, _ = check_correctness(sample, SOURCE, timeout=6, debug=False)
    elapsed = time.perf_counter() - start
    assert results == [True] * len(tests), results[:5]
    return {"wall": elapsed, "cpu": cpu(resource.RUSAGE_CHILDREN) - cpu_before}


def marginal_ms(few: float, many: float) -> float:
    return 1000 * (many - few) / (MANY - FEW)


def one_round(check_correctness, few: list[JudgeTest], many: list[JudgeTest], checker: str, flip: bool) -> dict:
    """Few then many tests, ours and LCB's alternating (LCB's first when `flip`)."""
    sides = {"ours": lambda tests: ours(tests, checker)}
    if check_correctness:
        sides["lcb"] = lambda tests: lcb(check_correctness, tests)
    order = list(sides)[::-1] if flip else list(sides)
    got = {name: {} for name in sides}
    for size, tests in (("few", few), ("many", many)):
        for name in order:
            got[name][size] = sides[name](tests)
    row = {}
    for name in sides:
        row[f"{name}_ms"] = marginal_ms(got[name]["few"]["wall"], got[name]["many"]["wall"])
        row[f"{name}_cpu_ms"] = marginal_ms(got[name]["few"]["cpu"], got[name]["many"]["cpu"])
    p_few, p_many = got["ours"]["few"]["phases"], got["ours"]["many"]["phases"]
    phases = {k: marginal_ms(p_few.get(k, 0.0), p_many.get(k, 0.0)) for k in ("setup", "run", "teardown")}
    phases["judge"] = row["ours_ms"] - sum(phases.values())
    row["ours_phases_ms"] = phases
    if check_correctness:
        row["ratio"] = row["ours_ms"] / row["lcb_ms"]
        row["cpu_ratio"] = row["ours_cpu_ms"] / row["lcb_cpu_ms"]
    return row


def figure(label: str, median: dict, rounds: list[dict], key: str, unit: str) -> None:
    """One figure: the median round's, then every round's."""
    every = ", ".join(f"{r[key]:.2f}" for r in rounds)
    print(f"  {label}: {median[key]:.2f} {unit} (rounds: {every})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--checker", choices=("exact", "lcb"), default="exact", help="how our judge checks (see above)")
    parser.add_argument("--json", type=Path, help="write the figures here as JSON")
    args = parser.parse_args()
    check_correctness = lcb_grader()
    few, many = make_tests(FEW), make_tests(MANY)
    judge(Program(SOURCE), few[:3], JudgeLimits(), args.checker, backend="bwrap")  # warm-up: page cache, cgroups
    load_start = os.getloadavg()[0]
    rounds = [one_round(check_correctness, few, many, args.checker, flip=i % 2 == 1) for i in range(args.rounds)]
    key = "ratio" if check_correctness else "ours_ms"
    median = sorted(rounds, key=lambda r: r[key])[len(rounds) // 2]
    summary = {
        "workload": f"python sum program, inputs of 10 to 100,000 characters, ({MANY} - {FEW} tests) / {MANY - FEW}",
        "checker": args.checker,
        "cores": os.cpu_count(),
        "load_avg_1m": {"start": load_start, "end": os.getloadavg()[0]},
        "rounds": rounds,
        "median_round": median,
    }
    print(f"judge speed: marginal cost per test, {summary['workload']}; our checker {args.checker}")
    print(f"  {len(rounds)} rounds, ours and LCB's alternating within each; the median round (by {key}) shown")
    figure("ours (bwrap, cgroup accounting)", median, rounds, "ours_ms", "ms per test")
    print("    phases: " + ", ".join(f"{k} {v:.2f} ms" for k, v in median["ours_phases_ms"].items()))
    figure("  CPU (host + sandbox)", median, rounds, "ours_cpu_ms", "ms per test")
    if check_correctness:
        figure("LCB check_correctness (no isolation)", median, rounds, "lcb_ms", "ms per test")
        figure("  CPU (its worker process)", median, rounds, "lcb_cpu_ms", "ms per test")
        figure("ratio ours / LCB, wall", median, rounds, "ratio", "x")
        print(f"    median of the rounds' ratios: {statistics.median(r['ratio'] for r in rounds):.2f}x")
        figure("ratio ours / LCB, CPU", median, rounds, "cpu_ratio", "x")
    else:
        print("  (set FLAB_LCB_REPO to a LiveCodeBench checkout to measure its grader in the same run)")
    load = summary["load_avg_1m"]
    print(f"  load average (1 min): {load['start']:.1f} at the start, {load['end']:.1f} at the end", end="")
    print(f", on {summary['cores']} cores")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
