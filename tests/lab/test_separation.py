"""Per-problem limits and the separation check (issue #29), on three problems built so that the
answer is known: one whose brute force is quadratic and whose buggy variant breaks past 100
numbers; one whose "brute force" is the reference itself; one whose only buggy variant breaks on
tiny inputs alone."""

import json
import random

import pytest

from backend.errors import UserError
from backend.lab.problems import lab_problems, store_lab_problems, with_limits
from backend.lab.recipe import LabRecipe
from backend.lab.separation import FLOOR_S, Programs, first_failing_tier, limit_from, pays, separation, told_apart
from backend.records import Problem, Test, TestResult, tier_of
from backend.store import Store
from tests.conftest import run_cli

REFERENCE = "import sys\nnums = sys.stdin.read().split()[1:]\nprint(sum(map(int, nums)))\n"
# quadratic: n^2 / 2 additions, a few ms of CPU at n = 200 (tier 3), seconds at n = 6,664 (tier 5)
QUADRATIC = """import sys
nums = list(map(int, sys.stdin.read().split()[1:]))
total = 0
for i in range(len(nums)):
    for j in range(i):
        total += 0
print(sum(nums) + total)
"""
WRONG_PAST_100 = "import sys\nnums = sys.stdin.read().split()[1:]\nprint(sum(map(int, nums[:100])))\n"
WRONG_ALWAYS = "print(-1)\n"
WRONG_BELOW_20 = (
    "import sys\nnums = sys.stdin.read().split()[1:]\nprint(sum(map(int, nums)) if len(nums) >= 20 else -1)\n"
)


def make_tests(pid: str) -> list[Test]:
    """Two tests per tier 1-5: `n` then n numbers of 1-2 digits, padded to the tier's length."""
    rng, tests = random.Random(0), []
    for tier in range(1, 6):
        for target in (2 * 10 ** (tier - 1), 6 * 10 ** (tier - 1)):  # lengths inside the tier
            n = max(1, (target - 8) // 3)
            nums = [rng.randrange(1, 100) for _ in range(n)]
            text = f"{n}\n{' '.join(map(str, nums))}\n"
            tests.append(Test(pid, len(tests), text, f"{sum(nums)}\n", len(text), tier_of(len(text))))
    return tests


def test_a_quadratic_brute_force_separates_a_fast_one_and_a_tiny_bug_do_not():
    built = [(Problem(f"t/{name}", "t", name, ""), make_tests(f"t/{name}")) for name in ("sum", "flat", "tiny-bug")]
    assert {t.tier for t in built[0][1]} == {1, 2, 3, 4, 5}
    programs = {
        "t/sum": Programs(REFERENCE, QUADRATIC, (WRONG_ALWAYS, WRONG_PAST_100)),
        "t/flat": Programs(REFERENCE, REFERENCE, (WRONG_ALWAYS,)),
        "t/tiny-bug": Programs(REFERENCE, QUADRATIC, (WRONG_BELOW_20,)),
    }
    reports = {r.problem_id: r for r in separation(built, programs, runs=2)}
    separating, flat = reports["t/sum"], reports["t/flat"]
    # a summing reference needs a few ms at most: the floor decides the limit
    assert separating.reference_cpu_s < FLOOR_S / 3 and separating.limit_s == FLOOR_S
    assert separating.separating, separating.reasons
    assert separating.brute_small_verdict == "AC" and separating.brute_small_cpu_s <= separating.limit_s / 3
    assert separating.brute_large_tle == 2  # both tier-5 tests
    # judged under 20 L = 1 s: the 20,000-number test needs seconds; the 6,664-number one about 1 s
    assert separating.brute_large_sized >= 1
    # WRONG_ALWAYS fails everywhere (highest tier 5); WRONG_PAST_100 only past 100 numbers (tier 3 up)
    assert separating.buggy_fail_tiers == [5, 5]
    assert not flat.separating
    assert flat.brute_large_tle == 0 and flat.brute_large_sized == 0
    assert flat.reasons == ["the brute force exceeds L on 0 tier-5 tests"]
    tiny_bug = reports["t/tiny-bug"]
    assert tiny_bug.buggy_fail_tiers == [2]  # n < 20 only: the tier-1 and tier-2 tests
    assert tiny_bug.reasons == ["no buggy-fast variant fails a test of tier >= 3"]
    # as the rewards see it: WRONG_ALWAYS first fails at tier 1, WRONG_PAST_100 at tier 3 (its
    # 600-character test holds 197 numbers; the 200-character one 64), WRONG_BELOW_20 at tier 1; the
    # quadratic brute force passes tiers <= 3 and first exceeds L at tier 4 (1 997 numbers, ~2 M
    # steps) or 5; the "brute force" that is the reference never fails
    assert separating.buggy_first_fail_tiers == [1, 3] and tiny_bug.buggy_first_fail_tiers == [1]
    assert separating.brute_first_fail_tier in (4, 5) and flat.brute_first_fail_tier is None
    # R_3 pays the brute force and neither buggy variant, R_inf none of them: only R_3 tells them
    # apart. Where the "brute force" passes everything, both rewards pay it and neither pays print(-1)
    assert (told_apart(separating, "R_3"), told_apart(separating, "R_inf")) == ([True, True], [False, False])
    assert (told_apart(flat, "R_3"), told_apart(flat, "R_inf")) == ([True], [True])
    again = separation(built[:1], programs, limits={"t/sum": 0.2})  # a build's recorded limit: not timed again
    assert again[0].limit_s == 0.2 and again[0].reference_cpu_s == 0.0
    assert again[0].buggy_first_fail_tiers == [1, 3]


def verdicts(table: str) -> list[TestResult]:
    """A hand-made verdict table: one 'tier:verdict:cpu_s' per test."""
    out = []
    for i, cell in enumerate(table.split()):
        tier, verdict, cpu = cell.split(":")
        out.append(TestResult(i, 10 ** (int(tier) - 1), int(tier), verdict, float(cpu)))
    return out


@pytest.mark.parametrize(
    "table, limit_s, first",
    [("1:AC:0 2:AC:0 3:WA:0 4:AC:0 5:RE:0", None, 3),  # the largest failing tier would say 5
     ("1:AC:0 2:AC:0 3:AC:0 4:AC:0 5:AC:0", None, None),
     ("1:RE:0 5:WA:0", None, 1),
     ("5:TLE:1.0 4:AC:0.01 3:AC:0.0", None, 5),  # not in order: the lowest tier, not the first listed
     ("3:AC:0.01 4:AC:0.09 5:AC:0.8", 0.05, 4),  # judged under 20 L: over L fails at L
     ("3:AC:0.01 4:AC:0.04 5:AC:0.8", None, None)],
)  # fmt: skip
def test_the_first_failing_tier_of_a_hand_made_verdict_table(table, limit_s, first):
    assert first_failing_tier(verdicts(table), limit_s) == first


def test_which_reward_pays_a_program_by_its_first_failing_tier():
    """R_k pays iff nothing of tier <= k fails; R_inf iff nothing fails (a table from that rule)."""
    table = {None: (True, True, True), 1: (False, False, False), 3: (False, False, False), 4: (True, False, False),
             5: (True, False, False), 6: (True, True, False)}  # fmt: skip
    for tier, (r_3, r_5, r_inf) in table.items():
        assert (pays(tier, "R_3"), pays(tier, "R_5"), pays(tier, "R_inf")) == (r_3, r_5, r_inf), tier
    report = {"brute_first_fail_tier": 5, "buggy_first_fail_tiers": [2, 4, None]}
    assert told_apart(report, "R_3") == [True, False, False] and told_apart(report, "R_inf") == [False, False, True]


def test_the_limit_is_three_times_the_reference_with_a_floor():
    assert limit_from(0.0) == FLOOR_S
    assert limit_from(0.016) == FLOOR_S  # 3 x 0.016 = 0.048 < 0.05
    assert limit_from(0.02) == pytest.approx(0.06)
    assert limit_from(0.1234) == pytest.approx(0.370)


def test_the_lab_stores_each_problem_under_its_recorded_limit_and_refuses_a_missing_one(tmp_path):
    recipe = LabRecipe(only=["two-sum-exists", "max-subarray"], time_limit_s=None)
    built = lab_problems(recipe, progress=False)
    assert {p.time_limit_s for p, _ in built} == {None}  # not yet calibrated
    store = Store(tmp_path / "lab.duckdb")
    with pytest.raises(UserError, match="no time limit recorded for lab/two-sum-exists"):
        store_lab_problems(store, with_limits(built, {"lab/max-subarray": 0.07}))
    assert store.select(Problem) == []  # nothing half-stored
    store_lab_problems(store, with_limits(built, {"lab/max-subarray": 0.07, "lab/two-sum-exists": 0.123}))
    assert {p.id: p.time_limit_s for p in store.select(Problem)} == {
        "lab/max-subarray": 0.07,
        "lab/two-sum-exists": 0.123,
    }
    fixed = lab_problems(LabRecipe(only=["max-subarray"], time_limit_s=0.1, withheld_share=0.0), progress=False)
    assert [p.time_limit_s for p, _ in fixed] == [0.1]  # one limit for all, as the committed build used


def test_lab_separation_prints_each_problems_limit_and_verdict():
    result = run_cli("lab", "separation", "--only", "two-sum-exists", "--runs", "1", "--json")
    assert result.returncode == 0, result.stderr[-2000:]
    [report] = json.loads(result.stdout)
    assert report["problem_id"] == "lab/two-sum-exists"
    assert report["limit_s"] == round(max(FLOOR_S, 3 * report["reference_cpu_s"]), 3)
    # an O(n^2) pair scan: milliseconds on tiers <= 3, far over L on the three 10^4-number tier-5 tests
    assert report["separating"] and report["brute_large_tle"] == 3
    unknown = run_cli("lab", "separation", "--only", "no-such-problem")
    assert unknown.returncode != 0 and "no-such-problem" in unknown.stderr and "Traceback" not in unknown.stderr
