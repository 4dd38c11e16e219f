"""Augmented solutions compute exactly what the originals do, judged in the real sandbox."""

import ast
import random

import pytest

from backend.grading.judge import JudgeTest, Program
from backend.grading.limits import JudgeLimits
from backend.grading.pool import JudgeJob, judge_many
from backend.lab.augment import augment, own_names, rename_map
from backend.problems.build import build_builtin
from backend.problems.builtin import get


def test_renaming_is_consistent_and_avoids_imports_and_builtins():
    source = (
        "import sys\nn = int(input())\ntotal = 0\nfor i in range(n):\n    total += i\nprint(total, len(sys.argv))\n"
    )
    rng = random.Random(1)
    names = own_names(ast.parse(source))
    assert names == {"n", "total", "i"}
    mapping = rename_map(names, rng, p=1.0)
    assert set(mapping) == names and len(set(mapping.values())) == 3
    assert not set(mapping.values()) & {"sys", "int", "input", "range", "print", "len"}


def test_variants_differ_but_stay_parseable():
    source = get("longest-run").module.REFERENCE
    variants = {augment(source, random.Random(seed)) for seed in range(12)}
    assert len(variants) >= 6
    for v in variants:
        ast.parse(v)


@pytest.mark.slow
def test_augmented_solutions_get_the_same_verdicts_as_the_originals():
    """Every builtin reference, brute force and buggy variant, two augmentations each, on the
    tests up to tier 3: verdict and first failing test must not change."""
    built = build_builtin(None, progress=False)
    limits = JudgeLimits(time_limit_s=2.0, memory_mb=256)
    jobs = []
    for problem, tests in built:
        module = get(problem.id.split("/", 1)[1]).module
        cases = [JudgeTest(t.input, t.output) for t in tests if t.tier <= 3]
        for role, source in [("ref", module.REFERENCE), ("brute", module.BRUTE)] + [("bug", b) for b in module.BUGGY]:
            jobs.append(JudgeJob((problem.id, role, -1), Program(source), cases, limits))
            for seed in range(2):
                variant = augment(source, random.Random(seed))
                jobs.append(JudgeJob((problem.id, role, seed), Program(variant), cases, limits))
    results = {key: (r.verdict, r.first_failing_test) for key, r in judge_many(jobs, workers=2)}
    changed = [key for key, v in results.items() if v != results[(key[0], key[1], -1)]]
    assert not changed, changed[:5]
    assert sum(v[0] == "AC" for v in results.values()) > len(built) * 2 * 3  # references and brutes pass
