"""Telling brute-force, reference-style and buggy-fast programs apart (backend/lab/styles.py)."""

import random

import pytest

from backend.lab.augment import augment
from backend.lab.styles import (
    confusion_shares,
    other_problem,
    restates_title,
    sft_sources,
    shape,
    style_of,
    style_shares,
)
from backend.records import Checkpoint, Experiment, Sample

PROBLEMS = ["builtin/max-subarray", "builtin/two-sum-exists", "builtin/count-inversions"]


@pytest.mark.parametrize("problem", PROBLEMS)
def test_each_sft_program_and_its_renamed_variants_keep_their_style(problem):
    sources = sft_sources(problem)
    for kind, programs in sources.items():
        for source in programs:
            assert style_of(source, sources) == kind
            for seed in range(3):  # renamed, reformatted, idioms rewritten: still the same program
                assert style_of(augment(source, random.Random(seed), rename_p=1.0), sources) == kind, (kind, seed)


def test_broken_and_foreign_programs_are_named_as_such():
    sources = sft_sources("builtin/max-subarray")
    assert style_of(None, sources) == "no program"
    assert style_of("def f(:\n  return", sources) == "other"  # does not parse
    assert style_of("import sys\nprint(sum(map(int, sys.stdin.read().split())) ** 3)\n", sources) == "other"


def test_style_shares_per_alpha_from_the_store(store):
    sources = sft_sources("builtin/max-subarray")
    store.put([Experiment(id="e", kind="sweep", name="t")])
    store.put(
        [Checkpoint(id=c, path=f"/x/{c}", kind="merged", alpha=a, label=c) for c, a in (("lo", 0.0), ("hi", 1.0))]
    )
    codes = {
        "lo": [sources["brute"][0]] * 3 + [sources["reference"][0]],
        "hi": [sources["reference"][0]] * 2 + [None, "x = ("],
    }
    store.put([Sample(experiment_id="e", checkpoint_id=c, problem_id="builtin/max-subarray", sample_idx=i,
                      setting="reasoning", completion="", code=code)
               for c, cs in codes.items() for i, code in enumerate(cs)])  # fmt: skip
    shares = {(r["label"], r["style"]): r["share"] for r in style_shares(store, "e").to_dicts()}
    assert shares["lo", "brute"] == 0.75 and shares["lo", "reference"] == 0.25
    assert shares["hi", "reference"] == 0.5 and shares["hi", "no program"] == 0.25 and shares["hi", "other"] == 0.25


def test_style_shares_ci_resamples_problems(store):
    """Two problems, one all brute force and one all reference: the share is 1/2, and a bootstrap
    over problems draws both brute (1), one of each (1/2) or neither (0), so its 95 % CI is [0, 1]."""
    store.put([Experiment(id="e", kind="sweep", name="t")])
    store.put([Checkpoint(id="lo", path="/x/lo", kind="merged", alpha=0.0, label="lo")])
    programs = {"builtin/max-subarray": "brute", "builtin/count-inversions": "reference"}
    store.put(
        [
            Sample(
                experiment_id="e",
                checkpoint_id="lo",
                problem_id=p,
                sample_idx=i,
                setting="reasoning",
                completion="",
                code=sft_sources(p)[kind][0],
            )
            for p, kind in programs.items()
            for i in range(2)
        ]
    )
    rows = {r["style"]: r for r in style_shares(store, "e").to_dicts()}
    assert (rows["brute"]["share"], rows["brute"]["share_lo"], rows["brute"]["share_hi"]) == (0.5, 0.0, 1.0)
    assert (rows["other"]["share"], rows["other"]["share_lo"], rows["other"]["share_hi"]) == (0.0, 0.0, 0.0)


def test_another_problems_program_is_confusion_and_a_variant_of_its_own_is_not():
    problems = {pid: sft_sources(pid) for pid in PROBLEMS}
    shapes = {pid: [shape(p) for kind in src.values() for p in kind] for pid, src in problems.items()}
    own, foreign = problems["builtin/max-subarray"], problems["builtin/count-inversions"]
    for kind in ("reference", "brute"):
        renamed = augment(own[kind][0], random.Random(1), rename_p=1.0)
        assert not other_problem(renamed, "builtin/max-subarray", shapes)
        assert other_problem(augment(foreign[kind][0], random.Random(1), rename_p=1.0), "builtin/max-subarray", shapes)
    assert not other_problem(None, "builtin/max-subarray", shapes)
    assert not other_problem("import sys\nprint(len(sys.stdin.read()) ** 7)\n", "builtin/max-subarray", shapes)


def test_confusion_shares_per_alpha_from_the_store(store):
    mine, theirs = sft_sources("builtin/max-subarray"), sft_sources("builtin/two-sum-exists")
    store.put([Experiment(id="e", kind="sweep", name="t")])
    store.put(
        [Checkpoint(id=c, path=f"/x/{c}", kind="merged", alpha=a, label=c) for c, a in (("lo", 0.0), ("hi", 1.0))]
    )
    codes = {  # asked max-subarray: 1 of 4 and 3 of 4 are two-sum-exists's programs
        "lo": [mine["brute"][0], mine["reference"][0], None, theirs["reference"][0]],
        "hi": [theirs["brute"][0], theirs["reference"][0], theirs["reference"][0], mine["buggy"][0]],
    }
    store.put([Sample(experiment_id="e", checkpoint_id=c, problem_id="builtin/max-subarray", sample_idx=i,
                      setting="reasoning", completion="", code=code)
               for c, cs in codes.items() for i, code in enumerate(cs)])  # fmt: skip
    # two-sum-exists's programs count as foreign only if its sources are known: a sample of it is in the sweep
    store.put([Sample(experiment_id="e", checkpoint_id="lo", problem_id="builtin/two-sum-exists", sample_idx=0,
                      setting="reasoning", completion="", code=theirs["reference"][0])])  # fmt: skip
    shares = {r["label"]: (r["share"], r["samples"]) for r in confusion_shares(store, "e").to_dicts()}
    assert shares == {"lo": (1 / 5, 5), "hi": (3 / 4, 4)}
    # counted on max-subarray alone, two-sum-exists's programs are still the foreign candidates
    only = {
        r["label"]: (r["share"], r["samples"])
        for r in confusion_shares(store, "e", {"builtin/max-subarray"}).to_dicts()
    }
    assert only == {"lo": (1 / 4, 4), "hi": (3 / 4, 4)}
    assert confusion_shares(store, "e", {"builtin/two-sum-exists"}).to_dicts()[0]["share"] == 0.0


def test_confusion_shares_count_the_sft_overlay_last_off_the_alpha_axis(store):
    mine, theirs = sft_sources("builtin/max-subarray"), sft_sources("builtin/two-sum-exists")
    store.put([Experiment(id="e", kind="sweep", name="t")])
    store.put([Checkpoint(id="mid", path="/x/mid", kind="merged", alpha=0.5, label="α=0.5"),
               Checkpoint(id="sft", path="/x/sft", kind="hf", alpha=None, label="SFT")])  # fmt: skip
    codes = {"sft": [theirs["brute"][0], theirs["reference"][0], mine["brute"][0]], "mid": [mine["reference"][0]] * 2}
    store.put([Sample(experiment_id="e", checkpoint_id=c, problem_id="builtin/max-subarray", sample_idx=i,
                      setting="reasoning", completion="", code=code)
               for c, cs in codes.items() for i, code in enumerate(cs)])  # fmt: skip
    store.put([Sample(experiment_id="e", checkpoint_id="mid", problem_id="builtin/two-sum-exists", sample_idx=0,
                      setting="reasoning", completion="", code=theirs["reference"][0])])  # fmt: skip
    rows = confusion_shares(store, "e", {"builtin/max-subarray"}).to_dicts()
    assert [(r["label"], r["alpha"], r["share"], r["samples"]) for r in rows] == [
        ("α=0.5", 0.5, 0.0, 2),
        ("SFT", None, 2 / 3, 3),
    ]


@pytest.mark.parametrize(
    "completion, expected",
    [("Problem: Two Sum Exists.\n```python\nprint(1)\n```", True),
     ("Problem: Two Sum.\n```python\n", False),  # a prefix of the title is another title
     ("Problem: Two Sum Exists Twice.\n", False),
     ("```python\nprint(1)\n```", False), (None, False)],
)  # fmt: skip
def test_a_restated_title_is_the_whole_title_in_the_taught_format(completion, expected):
    assert restates_title(completion, "Two Sum Exists", "Problem: {title}.\n") is expected
    assert restates_title(completion, "Two Sum Exists", "") is False  # nothing was taught to restate
