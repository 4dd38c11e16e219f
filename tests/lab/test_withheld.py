"""Withheld references (issue #49, the fourth design): a seeded, difficulty-stratified share of the
separating held-in problems is taught without its reference program, the rest as before; and a
recipe written before the setting (build F's) reads back without a withheld set and draws the very
mix its build recorded."""

import json
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from backend.errors import UserError
from backend.lab.artifacts import ARTIFACTS
from backend.lab.problems import withheld_ids, withheld_sets
from backend.lab.recipe import LabRecipe
from backend.lab.sft import code_rows, drawn_mix, examples, solutions, tokenizer_corpus
from backend.lab.styles import style_of
from backend.problems.build import build_builtin
from backend.records import Problem
from backend.rollout.extract import extract_code

BUILD_F = Path(__file__).with_name("build_f_manifest.json")  # kept from build F's recipe.json


def fake(n_easy: int, n_medium: int, n_hard: int) -> list[Problem]:
    counts = {"easy": n_easy, "medium": n_medium, "hard": n_hard}
    return [Problem(f"t/{d}-{i}", "t", f"{d} {i}", "", difficulty=d) for d, n in counts.items() for i in range(n)]


@pytest.mark.parametrize(
    "sizes, share", [((10, 10, 10), 0.5), ((3, 4, 5), 0.5), ((10, 10, 10), 0.3), ((7, 2, 9), 0.25)]
)
def test_the_withheld_draw_is_a_seeded_share_stratified_by_difficulty(sizes, share):
    problems = fake(*sizes)
    chosen = withheld_ids(problems, share, seed=0)
    by_difficulty = Counter(p.difficulty for p in problems if p.id in chosen)
    assert len(chosen) == int(share * len(problems) + 1e-9)  # floor(share × 30) = 15 or 9, floor(6) = 6
    for difficulty, size in zip(("easy", "medium", "hard"), sizes, strict=True):
        assert abs(by_difficulty[difficulty] - share * size) < 1, (difficulty, by_difficulty)
    assert withheld_ids(problems, share, seed=0) == chosen  # seeded
    assert chosen == [p.id for p in problems if p.id in chosen]  # in the order given
    others = {tuple(withheld_ids(problems, share, seed=s)) for s in range(1, 6)}
    assert len(others | {tuple(chosen)}) > 1  # another seed, another set


def test_build_fs_separating_problems_split_five_of_each_difficulty():
    """Build F's 30 separating held-in problems are 10 of each difficulty: the withheld half is 5 of each."""
    manifest = json.loads(BUILD_F.read_text())
    held_in = [p for p, _ in build_builtin(None, only=[p.split("/")[1] for p in manifest["held_in"]], progress=False)]
    held_in = [replace(p, id=f"lab/{p.id.split('/', 1)[1]}") for p in held_in]
    sets = withheld_sets(held_in, manifest["separating"], 0.5, seed=0)
    separating_held_in = set(manifest["held_in"]) & set(manifest["separating"])
    assert set(sets["withheld"]) | set(sets["kept"]) == separating_held_in and len(sets["withheld"]) == 15
    assert not set(sets["withheld"]) & set(sets["kept"])
    difficulty = {p.id: p.difficulty for p in held_in}
    assert Counter(difficulty[p] for p in sets["withheld"]) == {"easy": 5, "medium": 5, "hard": 5}
    assert withheld_sets(held_in, manifest["separating"], 0.0, seed=0) == {}


SLUGS = ["longest-run", "balanced-brackets", "sliding-window-max", "closest-pair"]  # easy, easy, medium, hard


def program_of(text: str) -> str:
    return extract_code(text).code


@pytest.mark.slow  # the style classifier (difflib) over ~800 programs
def test_withheld_problems_sft_rows_hold_no_reference_program_and_as_many_rows():
    """Every program SFT shows for a withheld problem (prompted rows, completion-only rows, the
    tokenizer's corpus), classified by its nearest SFT source (lab/styles.py, independent of the row's
    own `kind`), is a brute force or a buggy variant; the kept problems still get their reference;
    each problem keeps sum(its difficulty's weights) prompted rows per epoch."""
    epochs = 16
    recipe = replace(LabRecipe(), sft_epochs=epochs, code_sequences=160)
    problems = [p for p, _ in build_builtin(None, only=SLUGS, progress=False)]
    withheld = {problems[0].id, problems[2].id}
    rows = examples([(p, None) for p in problems], recipe, withheld) + code_rows(problems, recipe, withheld)
    seen = {p.id: Counter() for p in problems}
    for row in rows:
        seen[row["problem_id"]][style_of(program_of(row["completion"]), solutions_of(row["problem_id"]))] += 1
    for p in problems:
        if p.id in withheld:
            assert seen[p.id]["reference"] == 0 and seen[p.id]["brute"] and seen[p.id]["buggy"], seen[p.id]
        else:
            assert seen[p.id]["reference"] > 0, seen[p.id]
    drawn = drawn_mix(rows)
    for p in problems:
        assert sum(drawn[p.id].values()) == epochs * sum(recipe.mix_for(p.difficulty).values())
    for p in problems:  # each kind as its mix weighs it (withheld: 0 : 6 : 4), within 4 binomial sd
        weights = recipe.withheld_mix if p.id in withheld else recipe.mix_for(p.difficulty)
        for kind, weight in weights.items():
            share, expected = drawn[p.id].get(kind, 0) / (epochs * 10), weight / sum(weights.values())
            assert abs(share - expected) <= 4 * (expected * (1 - expected) / (epochs * 10)) ** 0.5, (p.id, kind)
    corpus = tokenizer_corpus(problems, recipe, withheld)
    titles = {p.id: p.title for p in problems}
    for pid in withheld:
        mine = [program_of(t) for t in corpus if t.startswith(f"Problem: {titles[pid]}.")]
        assert mine and all(style_of(code, solutions_of(pid)) != "reference" for code in mine)


def solutions_of(problem_id: str) -> dict[str, list[str]]:
    return solutions(Problem(problem_id, "t", "", ""))


@pytest.mark.slow
def test_build_fs_recipe_reads_back_without_a_withheld_set_and_draws_its_recorded_mix():
    """Build F recorded, per held-in problem, the kinds its SFT draw gave (recipe.json, sft.mix): its
    recipe read back today draws exactly those counts, over all 34 problems in the build's order."""
    manifest = json.loads(BUILD_F.read_text())
    recipe = LabRecipe.from_dict(manifest["recipe"])
    assert recipe.withheld_share == 0.0 and recipe == replace(LabRecipe(), withheld_share=0.0, sft_epochs=64)
    slugs = [p.split("/", 1)[1] for p in manifest["held_in"]]
    built = {p.id.split("/", 1)[1]: p for p, _ in build_builtin(None, only=slugs, progress=False)}
    problems = [replace(built[s], id=f"lab/{s}") for s in slugs]
    assert drawn_mix(examples([(p, None) for p in problems], recipe)) == manifest["sft"]["mix"]


@pytest.mark.slow
@pytest.mark.skipif(not (ARTIFACTS / "recipe.json").is_file(), reason="no committed lab artifacts")
def test_the_committed_builds_recipe_draws_its_recorded_mix_with_its_withheld_set():
    """Build G (the fourth design) recorded its withheld set and the kinds its SFT draw gave: its
    recipe read back today, with that set, draws exactly those counts; no withheld problem drew a
    reference row, and every kept one did."""
    manifest = json.loads((ARTIFACTS / "recipe.json").read_text())
    recipe = LabRecipe.from_dict(manifest["recipe"])
    assert recipe == LabRecipe() and manifest["withheld"]
    slugs = [p.split("/", 1)[1] for p in manifest["held_in"]]
    built = {p.id.split("/", 1)[1]: p for p, _ in build_builtin(None, only=slugs, progress=False)}
    problems = [replace(built[s], id=f"lab/{s}") for s in slugs]
    mix = drawn_mix(examples([(p, None) for p in problems], recipe, manifest["withheld"]))
    assert mix == manifest["sft"]["mix"]
    assert all("reference" not in mix[p] for p in manifest["withheld"])
    assert all(mix[p].get("reference", 0) > 0 for p in manifest["kept"])


def test_without_a_withheld_set_the_completion_only_rows_draw_as_build_f_drew_them():
    """Build F's rule, written out: one seeded choice among every (problem, program) of every kind,
    then the program augmented from the same generator. A withheld set changes only its own problems."""
    import random

    from backend.lab.augment import augment
    from backend.lab.sft import as_completion

    recipe = replace(LabRecipe(), withheld_share=0.0, code_sequences=60)
    problems = [p for p, _ in build_builtin(None, only=SLUGS, progress=False)]
    rng = random.Random(recipe.seed + 1)
    sources = [(p, s) for p in problems for kind in solutions(p).values() for s in kind]
    expected = []
    for _ in range(recipe.code_sequences):
        problem, source = rng.choice(sources)
        expected.append((f"Problem: {problem.title}.\n", as_completion(augment(source, rng, 0.0))))
    assert [(r["context"], r["completion"]) for r in code_rows(problems, recipe)] == expected
    assert code_rows(problems, recipe, withheld=()) == code_rows(problems, recipe)


@pytest.mark.parametrize(
    "values, message",
    [({"withheld_share": 1.0}, "withheld_share is the share of separating held-in problems trained without their "
                               "reference; give 0 (none) up to below 1 (some must keep it), not 1.0"),
     ({"withheld_share": -0.5}, "give 0 (none) up to below 1 (some must keep it), not -0.5"),
     ({"withheld_mix": {"reference": 1, "brute": 6, "buggy": 3}},
      "the withheld problems' mix must hold no reference program; set its reference weight to 0, not 1"),
     ({"withheld_mix": {"reference": 0, "brute": 0}}, "mix for withheld problems: every weight is 0"),
     ({"withheld_mix": {"brute": 6, "fast": 4}}, "mix for withheld problems: give whole weights >= 0"),
     ({"time_limit_s": 0.1}, "withheld problems are drawn among the separating ones, which only per-problem limits "
                             "measure; set time_limit_s to None or withheld_share to 0")],
)  # fmt: skip
def test_an_invalid_withheld_setting_is_refused_in_one_line(values, message):
    with pytest.raises(UserError, match=re.escape(message)) as refused:
        replace(LabRecipe(), **values)
    assert "\n" not in str(refused.value)
    replace(LabRecipe(), withheld_share=0.0, time_limit_s=0.1)  # one limit for all, nothing withheld: fine
