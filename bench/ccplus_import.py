"""CodeContests+ at real size: peak memory of importing a generated shard of the real schema.

A real shard is 2–6 GB, most of it about 1,000 submissions per problem. This writes a shard of
`--gb` GB (random, incompressible code in the submissions), then measures in fresh processes the
peak RSS of loading the problems (what `problems import ccplus` reads) and of reading the
submissions of 20 sampled problems (what `problems calibrate --bench ccplus` reads), against the
naive baseline `pyarrow.parquet.read_table(shard).to_pylist()` (with `--baseline`; it needs
several times the shard in memory).

    .venv/bin/python bench/ccplus_import.py [--gb 5] [--baseline]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUBMISSIONS, CODE_BYTES = 1000, 2048  # per problem, as in the dataset


def write_shard(path: Path, gb: float) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    per_problem = SUBMISSIONS * CODE_BYTES
    problems = max(1, int(gb * (1 << 30) / per_problem))
    writer = None
    for start in range(0, problems, 20):  # one row group of 20 problems at a time
        rows = []
        for i in range(start, min(problems, start + 20)):
            subs = [
                {"code": os.urandom(CODE_BYTES // 2).hex(), "language": "py3" if k % 2 else "cpp"}
                for k in range(SUBMISSIONS)
            ]
            rows.append(
                {
                    "id": f"{i}A",
                    "title": f"P{i}",
                    "description": "x" * 2000,
                    "time_limit": 2000,
                    "memory_limit": 256,
                    "test_cases": [{"input": f"{k}\n", "output": f"{k}\n"} for k in range(30)],
                    "checker": None,
                    "true_positive_rate": 1.0,
                    "true_negative_rate": 1.0,
                    "correct_submissions": subs[: SUBMISSIONS // 2],
                    "incorrect_submissions": subs[SUBMISSIONS // 2 :],
                }
            )
        table = pa.Table.from_pylist(rows)
        writer = writer or pq.ParquetWriter(path, table.schema)
        writer.write_table(table)
    writer.close()
    return problems


MEASURE = """
import resource, sys, time
sys.path.insert(0, {root!r})
from backend.problems import ccplus
t = time.perf_counter()
{body}
print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""
BODIES = {
    "load problems (import)": "assert ccplus.load({shard!r})",
    "submissions of 20 problems (calibrate)": "ids = {{f'ccplus/{{i}}A' for i in range(0, 2000, 100)}}\n"
    "ccplus.submissions({shard!r}, ids)",
    "baseline: read_table().to_pylist()": "import pyarrow.parquet as pq\npq.read_table({shard!r}).to_pylist()",
}


def measure(name: str, shard: Path) -> tuple[float, int]:
    code = MEASURE.format(root=str(ROOT), body=BODIES[name].format(shard=str(shard)))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if out.returncode != 0:
        return float("nan"), -1
    seconds, peak = out.stdout.split()
    return float(seconds), int(peak)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gb", type=float, default=5.0)
    parser.add_argument("--baseline", action="store_true", help="also run the naive read (needs a lot of memory)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        shard = Path(tmp) / "train-00000-of-00001.parquet"
        t = time.perf_counter()
        problems = write_shard(shard, args.gb)
        print(
            f"generated {shard.stat().st_size / (1 << 30):.2f} GB, {problems} problems x {SUBMISSIONS} submissions "
            f"in {time.perf_counter() - t:.0f} s"
        )
        for name in BODIES:
            if name.startswith("baseline") and not args.baseline:
                continue
            seconds, peak = measure(name, shard)
            print(
                f"  {name:42}: peak RSS {peak:6d} MB, {seconds:6.1f} s"
                if peak >= 0
                else f"  {name}: failed (out of memory?)"
            )


if __name__ == "__main__":
    main()
