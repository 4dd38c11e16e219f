"""Judge speed: our marginal cost per test against LiveCodeBench's own grader, in the same run.

The workload of issue #32: a tiny Python sum program; test inputs of 10 to 10^5 characters
(100 lengths spaced evenly on a log scale, repeated). The marginal cost per test is
(time for 1,100 tests - time for 100 tests) / 1,000, so what is paid once per program (our
sandbox's start and teardown, LCB's worker process) drops out and the same input lengths count
on both sides. Ours is one `judge()` call: bwrap, a cgroup per sandbox, per-test caps. With
FLAB_LCB_REPO naming a LiveCodeBench checkout, LCB's `check_correctness` (in-process, no
isolation, no accounting) judges the same program on the same tests, and the ratio is printed.
Rounds alternate ours and LCB's, so both see the same machine load; the median round is reported
with the spread.

    FLAB_LCB_REPO=/path/to/LiveCodeBench .venv/bin/python bench/judge_speed.py [--rounds 3] [--json OUT]

The JSON also has our per-test phases (host side, marginal as above): setup (the last test's
cleanup awaited, input staged, memory admitted, cgroup armed), run (the launcher's fork, run and wait, one round trip),
teardown (usage read, output read) and judge (the judge's own work: checking, bookkeeping).
"""

from __future__ import annotations

import argparse
import json
import os
import random
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


def ours(tests: list[JudgeTest]) -> tuple[float, dict]:
    before = session.PHASES.copy()
    start = time.perf_counter()
    result = judge(Program(SOURCE), tests, JudgeLimits(), backend="bwrap")
    elapsed = time.perf_counter() - start
    assert result.verdict == "AC" and len(result.test_results) == len(tests), result.verdict
    assert result.accounting.startswith("cgroup"), f"no cgroup accounting here: {result.accounting}"
    phases = session.PHASES.copy()
    phases.subtract(before)
    return elapsed, dict(phases)


def lcb_grader():
    repo = os.environ.get("FLAB_LCB_REPO")
    if not repo:
        return None
    sys.path.insert(0, repo)
    from lcb_runner.evaluation.compute_code_generation_metrics import check_correctness

    return check_correctness


def lcb(check_correctness, tests: list[JudgeTest]) -> float:
    sample = {"input_output": json.dumps({"inputs": [t.input for t in tests], "outputs": [t.output for t in tests]})}
    start = time.perf_counter()
    results, _ = check_correctness(sample, SOURCE, timeout=6, debug=False)
    elapsed = time.perf_counter() - start
    assert results == [True] * len(tests), results[:5]
    return elapsed


def marginal_ms(few: float, many: float) -> float:
    return 1000 * (many - few) / (MANY - FEW)


def one_round(check_correctness, few: list[JudgeTest], many: list[JudgeTest]) -> dict:
    t_few, p_few = ours(few)
    t_many, p_many = ours(many)
    phases = {k: marginal_ms(p_few.get(k, 0.0), p_many.get(k, 0.0)) for k in ("setup", "run", "teardown")}
    row = {"ours_ms": marginal_ms(t_few, t_many)}
    phases["judge"] = row["ours_ms"] - sum(phases.values())
    row["ours_phases_ms"] = phases
    if check_correctness:
        l_few, l_many = lcb(check_correctness, few), lcb(check_correctness, many)
        row["lcb_ms"] = marginal_ms(l_few, l_many)
        row["ratio"] = row["ours_ms"] / row["lcb_ms"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, help="write the figures here as JSON")
    args = parser.parse_args()
    check_correctness = lcb_grader()
    few, many = make_tests(FEW), make_tests(MANY)
    judge(Program(SOURCE), few[:3], JudgeLimits(), backend="bwrap")  # warm-up: page cache, cgroup reaping
    rounds = [one_round(check_correctness, few, many) for _ in range(args.rounds)]
    key = "ratio" if check_correctness else "ours_ms"
    median = sorted(rounds, key=lambda r: r[key])[len(rounds) // 2]
    summary = {
        "workload": f"python sum program, inputs of 10 to 100,000 characters, ({MANY} - {FEW} tests) / {MANY - FEW}",
        "cores": os.cpu_count(),
        "load_avg_1m": os.getloadavg()[0],
        "rounds": rounds,
        "median_round": median,
    }
    print(f"judge speed: marginal cost per test, {summary['workload']}; {len(rounds)} rounds, median round shown")
    spread = ", ".join(f"{r['ours_ms']:.2f}" for r in rounds)
    print(f"  ours (bwrap, cgroup accounting): {median['ours_ms']:6.2f} ms per test (rounds: {spread})")
    print("    phases: " + ", ".join(f"{k} {v:.2f} ms" for k, v in median["ours_phases_ms"].items()))
    if check_correctness:
        spread = ", ".join(f"{r['lcb_ms']:.2f}" for r in rounds)
        print(f"  LCB check_correctness (no isolation): {median['lcb_ms']:6.2f} ms per test (rounds: {spread})")
        ratios = ", ".join(f"{r['ratio']:.2f}" for r in rounds)
        print(f"  ratio ours / LCB: {median['ratio']:.2f}x (rounds: {ratios})")
    else:
        print("  (set FLAB_LCB_REPO to a LiveCodeBench checkout to measure its grader in the same run)")
    print(f"  load average (1 min) at the end: {summary['load_avg_1m']:.1f} on {summary['cores']} cores")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
