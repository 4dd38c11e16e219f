"""Judge overhead: 20 samples x 30 tests of a stdin problem on both cores, against a plain
`subprocess.run` per test (no isolation at all), measured in the same run, with the judge's
cgroup accounting on (every process of a test counted and capped) and off (per-process rlimits).

    .venv/bin/python bench/judge_overhead.py [--backend bwrap|docker] [--language python|cpp]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.grading.judge import JudgeTest, Program
from backend.grading.pool import JudgeJob, judge_many

SAMPLES, TESTS_PER_SAMPLE = 20, 30
SOURCES = {
    "python": "import sys\ndata = sys.stdin.read().split()\nprint(sum(map(int, data[1:])))\n",
    "cpp": '#include <cstdio>\nint main(){int n;long long s=0,x;scanf("%d",&n);'
    'while(n--){scanf("%lld",&x);s+=x;}printf("%lld\\n",s);}\n',
}


def make_tests() -> list[JudgeTest]:
    tests = []
    for i in range(TESTS_PER_SAMPLE):
        nums = list(range(1, 2 + i * 3))
        tests.append(JudgeTest(f"{len(nums)}\n{' '.join(map(str, nums))}\n", f"{sum(nums)}\n"))
    return tests


def ours(language: str, backend: str, tests, cgroups: bool = True) -> float:
    os.environ["FLAB_CGROUPS"] = "on" if cgroups else "off"  # read by the pool's fresh workers
    jobs = [JudgeJob(i, Program(SOURCES[language], language), tests, backend=backend) for i in range(SAMPLES)]
    start = time.perf_counter()
    verdicts = [r.verdict for _, r in judge_many(jobs, workers=2)]
    elapsed = time.perf_counter() - start
    assert verdicts == ["AC"] * SAMPLES, verdicts
    return elapsed


def baseline(language: str, tests) -> float:
    """The same work with subprocess.run per test and no isolation (C++ compiled once per sample)."""
    workdir = Path(tempfile.mkdtemp())

    def one_sample(i: int) -> None:
        src = workdir / f"s{i}.{'py' if language == 'python' else 'cpp'}"
        src.write_text(SOURCES[language])
        argv = ["/usr/bin/python3", str(src)]
        if language == "cpp":
            binary = workdir / f"s{i}"
            subprocess.run(["g++", "-O2", "-std=c++17", "-o", binary, src], check=True)
            argv = [str(binary)]
        for t in tests:
            out = subprocess.run(argv, input=t.input, capture_output=True, text=True).stdout
            assert out.split() == t.output.split()

    start = time.perf_counter()
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(one_sample, range(SAMPLES)))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="bwrap")
    parser.add_argument("--language", default="python", choices=list(SOURCES))
    args = parser.parse_args()
    tests = make_tests()
    ours(args.language, args.backend, tests[:2])  # warm-up: pool start, docker container, page cache
    n = SAMPLES * TESTS_PER_SAMPLE
    t_cgroup = ours(args.language, args.backend, tests, cgroups=True)
    t_rlimits = ours(args.language, args.backend, tests, cgroups=False)
    t_base = baseline(args.language, tests)
    print(
        f"judge overhead, {args.language}, backend={args.backend}, {SAMPLES} samples x {TESTS_PER_SAMPLE} tests, "
        f"2 workers, {os.cpu_count()} cores"
    )
    for label, t in (("cgroup accounting", t_cgroup), ("rlimits accounting", t_rlimits)):
        print(f"  judge, {label:18}: {t:7.2f} s = {1000 * t / n:6.2f} ms per test, {t / t_base:.2f}x subprocess.run")
    print(f"  subprocess.run (no isolation) : {t_base:7.2f} s = {1000 * t_base / n:6.2f} ms per test")


if __name__ == "__main__":
    main()
