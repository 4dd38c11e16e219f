"""The lab's problem set: the builtin problems with their tests up to tier `max_tier` and a CPU
limit scaled to those inputs, stored as bench `lab`. A tiny model is judged thousands of times on
a laptop-class CPU; the full 10^6-character tiers would cost a CPU-second per slow sample.

The limit is the recipe's one `time_limit_s`, or, where that is None, each problem's own L_p,
measured by `lab build` (`lab/separation.py`) and recorded in recipe.json, so that `lab import`
stores the limits the results were judged under instead of measuring them again."""

from __future__ import annotations

import hashlib
import math
from dataclasses import replace

from backend.errors import UserError
from backend.problems.build import build_builtin
from backend.problems.builtin import get
from backend.records import Problem, Test
from backend.store import Store

BENCH = "lab"
HELD_OUT = "held-out"
HELD_IN = "held-in"


def held_out_slugs(slugs: list[str], per_difficulty: int, seed: int) -> set[str]:
    """A fixed, seeded choice of `per_difficulty` problems per difficulty that no training sees."""
    by_difficulty: dict[str, list[str]] = {}
    for slug in slugs:
        by_difficulty.setdefault(get(slug).module.DIFFICULTY, []).append(slug)
    chosen = set()
    for group in by_difficulty.values():
        ranked = sorted(group, key=lambda s: hashlib.sha256(f"{seed}/{s}".encode()).hexdigest())
        chosen |= set(ranked[:per_difficulty])
    return chosen


def withheld_ids(problems: list[Problem], share: float, seed: int) -> list[str]:
    """A seeded, difficulty-stratified `share` of `problems` (the separating held-in ones), whose SFT
    holds no reference program (LabRecipe.withheld_share): the problems sorted by difficulty, then
    by a seeded hash within it, and every position where the running count of floor(share × i)
    steps up taken, so each difficulty gets its share within one problem and the total is
    floor(share × len(problems)). Ids in the order given."""
    ranked = sorted(
        problems, key=lambda p: (p.difficulty or "", hashlib.sha256(f"withheld/{seed}/{p.id}".encode()).hexdigest())
    )
    steps = [math.floor(share * i + 1e-9) for i in range(len(ranked) + 1)]  # 1e-9: 0.29 × 100 is 28.999…
    chosen = {p.id for i, p in enumerate(ranked) if steps[i + 1] > steps[i]}
    return [p.id for p in problems if p.id in chosen]


def withheld_sets(held_in: list[Problem], separating: list[str], share: float, seed: int) -> dict[str, list[str]]:
    """The separating held-in problems trained without their reference ("withheld") and the rest of
    them ("kept"), when `share` withholds any (recipe.json records both; no build before G has them)."""
    if not share:
        return {}
    candidates = [p for p in held_in if p.id in set(separating)]
    withheld = withheld_ids(candidates, share, seed)
    return {"withheld": withheld, "kept": [p.id for p in candidates if p.id not in withheld]}


def withheld_and_kept(manifest: dict) -> dict[str, list[str]]:
    """The fourth design's two halves, as report sets, from a build's problem sets (none before build G)."""
    return {name: manifest[name] for name in ("withheld", "kept") if manifest.get(name)}


Built = list[tuple[Problem, list[Test]]]


def lab_problems(recipe, progress: bool = True) -> Built:
    """The problems and tests, each under the recipe's limit (None until `with_limits`)."""
    built = build_builtin(None, only=recipe.only or None, progress=progress)
    slugs = [p.id.split("/", 1)[1] for p, _ in built]
    held_out = held_out_slugs(slugs, recipe.held_out_per_difficulty, recipe.seed)
    out = []
    for problem, tests in built:
        slug = problem.id.split("/", 1)[1]
        pid = f"{BENCH}/{slug}"
        split = HELD_OUT if slug in held_out else HELD_IN
        kept = [t for t in tests if t.tier <= recipe.max_tier]
        out.append(
            (
                replace(problem, id=pid, bench=BENCH, time_limit_s=recipe.time_limit_s, tags=[*problem.tags, split]),
                [replace(t, problem_id=pid, idx=i) for i, t in enumerate(kept)],
            )
        )
    return out


def with_limits(built: Built, limits: dict[str, float]) -> Built:
    """Each problem under its own limit from `limits`, where it has one."""
    return [(replace(p, time_limit_s=limits.get(p.id, p.time_limit_s)), tests) for p, tests in built]


def store_lab_problems(store: Store, built: Built) -> Built:
    missing = [p.id for p, _ in built if p.time_limit_s is None]
    if missing:  # a recipe that calibrates its limits, read without the limits its build recorded
        raise UserError(f"no time limit recorded for {', '.join(missing)}; rebuild the lab with `lab build`")
    store.replace_problems(built)
    return built


def split_of(problem: Problem) -> str:
    return HELD_OUT if HELD_OUT in (problem.tags or []) else HELD_IN
