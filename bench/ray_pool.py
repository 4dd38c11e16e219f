"""The Ray engine pool against one engine actor, in the same run, on the project's own local cluster
with fake GPUs (RAY_OVERRIDE_RESOURCES; Ray only counts them, the engines run on the CPU).

One sweep's rollouts (tiny CPU model, α points × problems × n samples, transformers engine) are
sampled twice: by one actor (gpus=1), then by the pool (one actor per fake GPU). Each time counts
from the pool's start (actor processes, model loads) to the last stored sample; judging is left
out. The merged folders are made once, before both. On a machine with few cores the actors share
them, so the figure says what spreading α points buys there, not what GPUs would give.

    .venv/bin/python bench/ray_pool.py [--gpus 4] [--alphas 4] [--problems 4] [--n 4] [--max-tokens 64]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpus", type=int, default=4)
    parser.add_argument("--alphas", type=int, default=4)
    parser.add_argument("--problems", type=int, default=4)
    parser.add_argument("--n", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=64)
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="flab-ray-bench-"))
    os.environ["FLAB_CACHE"] = str(root / "cache")
    os.environ["RAY_OVERRIDE_RESOURCES"] = json.dumps({"CPU": os.cpu_count(), "GPU": args.gpus})

    from backend.lab.tiny import make_tiny_checkpoint
    from backend.problems.build import build_builtin
    from backend.records import Job
    from backend.rollout.run import select_problems
    from backend.store import Store
    from backend.sweep.executors import LocalExecutor, connect_ray
    from backend.sweep.pipeline import Progress, Work, sweep_points
    from backend.sweep.pool import RayExecutor
    from backend.sweep.spec import SweepSpec

    class RolloutOnly(Work):  # the bench times sampling; judging would share the same cores
        def finished(self, point) -> None:
            pass

        def idle(self) -> None:
            pass

    store = Store(root / "bench.duckdb")
    build_builtin(store, progress=False)
    low, high = (str(make_tiny_checkpoint(root / name, seed=s)) for name, s in (("low", 1), ("high", 2)))
    alphas = [-0.5 + 2.0 * i / max(args.alphas - 1, 1) for i in range(args.alphas)]
    spec = SweepSpec(low=low, high=high, alphas=alphas, n=args.n, max_tokens=args.max_tokens, executor="ray")
    problems = select_problems(store, spec)[: args.problems]
    store.put([Job(id="bench", kind="sweep", status="running", experiment_id="bench")])
    progress = Progress(store, "bench")
    points = sweep_points(store, spec, progress, LocalExecutor("transformers").merge)
    ray = connect_ray(None)
    print(
        f"cluster: {ray.cluster_resources()}; {os.cpu_count()} cores; "
        f"{len(points)} α × {len(problems)} problems × n={args.n}"
    )
    seconds = {}
    for gpus in (1, args.gpus):
        executor = RayExecutor("transformers", None, gpus)
        progress.set_total("rollout", len(points) * len(problems) * args.n)
        began = time.perf_counter()
        work = RolloutOnly(store, executor.judging, f"bench-{gpus}", problems, spec, {}, progress, "chat")
        executor.rollout_points(points, work)
        seconds[gpus] = time.perf_counter() - began
        executor.close()
        print(f"{gpus} actor(s): {seconds[gpus]:.1f} s")
    ray.shutdown()
    print(f"speed-up of {args.gpus} actors over 1: {seconds[1] / seconds[args.gpus]:.2f}×")


if __name__ == "__main__":
    main()
