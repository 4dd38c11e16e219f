"""Build the builtin benchmark: generate tiered inputs, compute expected outputs with the
reference solution inside the sandbox, cache by content, store problems and tests.

Deterministic: the seed of test j of tier k is a function of (slug, k, j) only, and the cache key
is the hash of the problem's module source, so a rebuild with unchanged sources runs nothing.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import zlib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from tqdm import tqdm

from backend.errors import UserError
from backend.grading.limits import JudgeLimits
from backend.problems.builtin import BENCH, BuiltinProblem, get, load_all
from backend.records import Problem, Test, tier_of
from backend.sandbox.backends import open_session
from backend.store import Store

TIERS = range(1, 7)
TESTS_PER_TIER = 3


def cache_dir() -> Path:
    base = Path(os.environ.get("FLAB_CACHE", Path.home() / ".cache" / "frontier-lab"))
    return base / "builtin"


def tier_targets(tier: int) -> list[int]:
    """Target input lengths spread inside [10^(k-1), 10^k)."""
    lo = 10 ** (tier - 1)
    return [max(2, int(lo * f)) for f in (2.0, 4.0, 7.0)] if tier > 1 else [3, 5, 8]


def seed_of(slug: str, tier: int, j: int) -> int:
    return int(hashlib.sha256(f"{slug}/{tier}/{j}".encode()).hexdigest()[:8], 16)


def generate_inputs(p: BuiltinProblem) -> list[str]:
    inputs = []
    for tier in TIERS:
        for j, target in enumerate(tier_targets(tier)[:TESTS_PER_TIER]):
            inputs.append(_in_tier(p, tier, target, seed_of(p.slug, tier, j)))
    return inputs


def _in_tier(p: BuiltinProblem, tier: int, target: int, seed: int) -> str:
    """Generators only hit their target approximately; steer the target until the input lands in
    the intended tier (or give up where the format cannot be that short)."""
    text = p.module.gen(target, seed)
    for _ in range(12):
        length = len(text)
        if tier_of(length) == tier:
            break
        if length >= 10**tier:
            target = max(1, int(target * 0.8 * 10**tier / length))
        else:
            target = int(target * 1.5 * 10 ** (tier - 1) / max(length, 1)) + 1
        text = p.module.gen(target, seed)
    return text


def run_reference(source: str, inputs: list[str], limits: JudgeLimits) -> list[str]:
    """Expected outputs: the reference solution run in the sandbox on every input."""
    session = open_session("bwrap", tmpfs_mb=2 * limits.output_mb + 96)
    try:
        loaded = session.load("python", source, limits.for_compile())
        if not loaded.ok:
            raise UserError(f"reference solution does not compile: {loaded.error}")
        outputs = []
        for text in inputs:
            res = session.run(limits.for_test(), text)
            if res.exit_code != 0 or res.wall_backstop_fired:
                raise UserError(f"reference failed (exit {res.exit_code}, signal {res.signal}): {res.stderr[-300:]}")
            outputs.append(res.stdout)
        return outputs
    finally:
        session.close()


def source_hash(p: BuiltinProblem) -> str:
    """The problem's source and the generation code here: a change to either rebuilds."""
    here = inspect.getsource(generate_inputs) + inspect.getsource(_in_tier) + inspect.getsource(tier_targets)
    return hashlib.sha256((inspect.getsource(p.module) + here).encode()).hexdigest()[:16]


def build_one(slug: str) -> tuple[Problem, list[Test]]:
    p = get(slug)  # by name: modules do not cross process boundaries
    cached = cache_dir() / f"{p.slug}-{source_hash(p)}.json.z"
    if cached.is_file():
        data = json.loads(zlib.decompress(cached.read_bytes()))
    else:
        inputs = generate_inputs(p)
        # generous limits: calibration, not this step, judges speed
        outputs = run_reference(p.module.REFERENCE, inputs, JudgeLimits(time_limit_s=10 * p.time_limit, memory_mb=1024))
        data = {"inputs": inputs, "outputs": outputs}
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(zlib.compress(json.dumps(data).encode(), 6))
        tmp.replace(cached)
    return to_records(p, data["inputs"], data["outputs"])


def to_records(p: BuiltinProblem, inputs: list[str], outputs: list[str]) -> tuple[Problem, list[Test]]:
    m = p.module
    problem = Problem(
        id=p.id,
        bench=BENCH,
        title=m.TITLE,
        statement=m.STATEMENT.strip(),
        kind="stdin",
        time_limit_s=p.time_limit,
        memory_limit_mb=p.memory_limit,
        checker="exact",
        input_spec=m.INPUT_SPEC.strip(),
        output_spec=m.OUTPUT_SPEC.strip(),
        difficulty=m.DIFFICULTY,
        platform="frontier-lab",
        tags=p.tags,
    )
    order = sorted(range(len(inputs)), key=lambda i: (len(inputs[i]), i))
    tests = [
        Test(
            problem_id=p.id,
            idx=n,
            input=inputs[i],
            output=outputs[i],
            input_len=len(inputs[i]),
            tier=tier_of(len(inputs[i])),
            is_public=n < 2,
        )
        for n, i in enumerate(order)
    ]
    return problem, tests


def build_builtin(store: Store | None, workers: int = 2, only: list[str] | None = None, progress: bool = True):
    """Build (or load from cache) every builtin problem; store them when a store is given."""
    problems = [p for p in load_all() if not only or p.slug in only]
    if only and len(problems) != len(set(only)):
        missing = set(only) - {p.slug for p in problems}
        raise UserError(f"no builtin problem named {sorted(missing)[0]!r}; see `python -m backend problems list`")
    built = []
    with ProcessPoolExecutor(workers) as pool:
        for result in tqdm(
            pool.map(build_one, [p.slug for p in problems]),
            total=len(problems),
            desc="builtin problems",
            disable=not progress,
        ):
            built.append(result)
    if store is not None:
        store.replace_problems(built)
    return built
