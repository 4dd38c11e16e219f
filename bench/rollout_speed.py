"""TransformersEngine throughput on CPU: batched generation against an unbatched loop, same run.

A tiny random-weight Qwen2 (built here); 32 prompts x 1 sample, 64 new tokens each.

    .venv/bin/python bench/rollout_speed.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.lab.tiny import make_tiny_checkpoint
from backend.rollout.engines import TransformersEngine
from backend.rollout.spec import SamplingSpec

PROMPTS, NEW_TOKENS = 32, 64


def main() -> None:
    folder = make_tiny_checkpoint(Path(tempfile.mkdtemp()) / "tiny", hidden=128, layers=4)
    convs = [
        [{"role": "user", "content": f"problem {i}: " + "read n and print n * 2. " * (1 + i % 4)}]
        for i in range(PROMPTS)
    ]
    spec = SamplingSpec(n=1, max_tokens=NEW_TOKENS, seed=0)
    batched, single = TransformersEngine(str(folder), batch_size=PROMPTS), TransformersEngine(str(folder), batch_size=1)
    batched.generate(convs[:2], spec)  # warm-up
    start = time.perf_counter()
    tokens_b = sum(c.completion_tokens for cs in batched.generate(convs, spec) for c in cs)
    t_b = time.perf_counter() - start
    start = time.perf_counter()
    tokens_s = sum(single.generate([c], spec)[0][0].completion_tokens for c in convs)
    t_s = time.perf_counter() - start
    print(f"tiny Qwen2 (hidden 128, 4 layers), {PROMPTS} prompts, up to {NEW_TOKENS} new tokens, CPU")
    print(f"  batched (one call, left padding) : {tokens_b / t_b:8.0f} tokens/s  ({tokens_b} tokens in {t_b:.2f} s)")
    print(f"  unbatched loop                   : {tokens_s / t_s:8.0f} tokens/s  ({tokens_s} tokens in {t_s:.2f} s)")
    print(f"  ratio (batched / unbatched)      : {(tokens_b / t_b) / (tokens_s / t_s):.1f}x")


if __name__ == "__main__":
    main()
