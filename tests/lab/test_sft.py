"""The SFT rows of the lab: what the tiny model is taught to write, read back the way a rollout
reads a sample (backend/rollout/extract.py)."""

import ast
import random
import re
from dataclasses import replace

import pytest

from backend.errors import UserError
from backend.lab.recipe import LabRecipe
from backend.lab.sft import IGNORE, code_rows, drawn_mix, encode, examples, solutions
from backend.problems.build import build_builtin
from backend.rollout.extract import extract_code

SLUGS = ["longest-run", "balanced-brackets", "sliding-window-max"]


def _rows(recipe, slugs=SLUGS):
    problems = [p for p, _ in build_builtin(None, only=slugs, progress=False)]
    return problems, examples([(p, None) for p in problems], recipe) + code_rows(problems, recipe)


def test_answers_restate_the_title_then_hold_one_program_the_rollout_extracts():
    recipe = replace(LabRecipe(), sft_epochs=2, code_sequences=30)
    problems, rows = _rows(recipe)
    titles = {p.title for p in problems}
    assert len(rows) == 2 * sum(sum(recipe.mix_for(p.difficulty).values()) for p in problems) + 30
    for row in rows:
        text = row["completion"] if row["prompt"] is not None else row["context"] + row["completion"]
        title, rest = re.fullmatch(r"Problem: (.+?)\.\n(.*)", text, re.S).groups()
        assert title in titles
        if row["prompt"] is not None:  # the title is the one the prompt's statement starts with
            assert row["prompt"][1]["content"].startswith(title + "\n")
        else:  # completion-only rows: the title is context, the answer the block alone
            assert row["completion"].startswith("```python\n")
        extracted = extract_code(text)
        assert extracted.ok and rest.startswith("```python\n")
        ast.parse(extracted.code)
        indents = {len(line) - len(line.lstrip(" ")) for line in extracted.code.splitlines()}
        assert all(i % 4 == 0 for i in indents), indents  # one indentation width: the model mixed two


def test_without_the_restatement_the_answer_is_the_block_alone():
    recipe = replace(
        LabRecipe(), sft_epochs=1, code_sequences=5, restatement="", title_copy_rows=0, swapped_title_rows=0
    )
    problems, rows = _rows(recipe)
    assert all(row["completion"].startswith("```python\n") for row in rows)
    assert all(solutions(p)["buggy"] for p in problems)


GRADED = ["longest-run", "sliding-window-max", "closest-pair"]  # easy, medium, hard
GRADIENT = {"easy": {"reference": 5, "brute": 3, "buggy": 2}, "medium": {"reference": 3, "brute": 4, "buggy": 3},
            "hard": {"reference": 1, "brute": 5, "buggy": 4}}  # fmt: skip


def test_each_problem_gets_its_difficultys_mix_by_a_seeded_draw_and_the_draw_is_recorded():
    epochs = 60
    recipe = replace(LabRecipe(), sft_epochs=epochs, code_sequences=0, mix=GRADIENT)
    problems, rows = _rows(recipe, GRADED)
    assert sorted(p.difficulty for p in problems) == ["easy", "hard", "medium"]
    drawn = drawn_mix(rows)
    for p in problems:
        mine = [row["kind"] for row in rows if row["problem_id"] == p.id]
        assert len(mine) == epochs * 10  # sum(weights) rows per epoch
        assert drawn[p.id] == {k: mine.count(k) for k in set(mine)}
        for kind, weight in GRADIENT[p.difficulty].items():  # within 4 binomial sd of weight / 10
            share, expected = drawn[p.id].get(kind, 0) / len(mine), weight / 10
            assert abs(share - expected) <= 4 * (expected * (1 - expected) / len(mine)) ** 0.5, (p.id, kind, share)
    assert drawn == drawn_mix(_rows(recipe, GRADED)[1])  # the same seed draws the same mix
    reseeded = drawn_mix(_rows(replace(recipe, seed=1), GRADED)[1])
    assert reseeded != drawn and {p: sum(c.values()) for p, c in reseeded.items()} == {
        p.id: epochs * 10 for p in problems
    }


@pytest.mark.parametrize(
    "mix, message",
    [
        ({"reference": 4, "fast": 3}, "mix for easy problems: give whole weights >= 0 for reference, brute, buggy"),
        ({"reference": 0, "brute": 0}, "every weight is 0"),
        ({"easy": GRADIENT["easy"], "hard": GRADIENT["hard"]}, "no entry for difficulty 'medium'"),
        ({"reference": 2.5}, "give whole weights"),
    ],
)
def test_a_mix_that_cannot_teach_is_refused_in_one_line(mix, message):
    with pytest.raises(UserError, match=message):
        LabRecipe(mix=mix)


def test_only_the_answer_is_learned():
    """Labels are -100 over the chat prompt, or over a completion-only row's title context, and
    the token ids themselves over the answer and its end-of-text."""
    from backend.lab.tiny import train_tokenizer

    recipe = replace(LabRecipe(), sft_epochs=1, code_sequences=4)
    problems, rows = _rows(recipe)
    tokenizer = train_tokenizer([r["completion"] for r in rows] + [p.statement for p in problems], 512)
    for row in (rows[0], rows[-1]):  # a prompted row, a completion-only row
        encoded = encode(tokenizer, row, 1024)
        answer = tokenizer(row["completion"])["input_ids"] + [tokenizer.eos_token_id]
        seen = len(encoded["input_ids"]) - len(answer)
        assert seen > 0 and encoded["input_ids"][seen:] == answer
        assert encoded["labels"] == [IGNORE] * seen + answer
        shown = tokenizer.decode(encoded["input_ids"][:seen])
        assert shown.endswith(row["context"] if row["prompt"] is None else "<|assistant|>\n")


def test_title_copy_rows_teach_copying_the_prompts_title_and_never_to_stop_after_it():
    """Each row's prompt carries a made-up title of training-title words, its answer is exactly
    that title restated, and the labels end there, with no end-of-text (else sampling would stop)."""
    from backend.lab.sft import title_rows
    from backend.lab.tiny import train_tokenizer

    recipe = replace(LabRecipe(), title_copy_rows=50, swapped_title_rows=0)
    problems = [p for p, _ in build_builtin(None, only=SLUGS, progress=False)]
    rows = title_rows([(p, None) for p in problems], recipe)
    words = {w for p in problems for w in p.title.split()}
    real = {p.title for p in problems}
    assert len(rows) == 50 and drawn_mix(rows) == {}
    titles = set()
    for row in rows:
        title = re.fullmatch(r"Problem: (.+)\.\n", row["completion"]).group(1)
        titles.add(title)
        assert row["prompt"][1]["content"].startswith(title + "\n\n")
        assert set(title.split()) <= words and 2 <= len(title.split()) <= recipe.title_copy_words
    assert len(titles) > 40 and not titles & real  # made up, and varied
    tokenizer = train_tokenizer([r["prompt"][1]["content"] for r in rows] + [r["completion"] for r in rows], 512)
    encoded = encode(tokenizer, rows[0], 1024)
    answer = tokenizer(rows[0]["completion"])["input_ids"]
    assert encoded["labels"][-len(answer) :] == answer and tokenizer.eos_token_id not in encoded["labels"]
    assert title_rows([(p, None) for p in problems], recipe) == rows  # seeded


def test_swapped_title_rows_put_one_problems_statement_under_anothers_title_and_restate_that_title():
    """The statement says one problem, the title another real one, and the answer follows the title;
    the made-up rows are drawn as before, whatever the number of swapped rows."""
    from backend.lab.sft import title_rows

    problems = [p for p, _ in build_builtin(None, only=SLUGS, progress=False)]
    recipe = replace(LabRecipe(), title_copy_rows=20, swapped_title_rows=30)
    rows = title_rows([(p, None) for p in problems], recipe)
    made_up, swapped = rows[:20], rows[20:]
    assert made_up == title_rows([(p, None) for p in problems], replace(recipe, swapped_title_rows=0))
    by_id = {p.id: p for p in problems}
    assert len(swapped) == 30
    for row in swapped:
        title = re.fullmatch(r"Problem: (.+)\.\n", row["completion"]).group(1)
        own = by_id[row["problem_id"]]
        user = row["prompt"][1]["content"]
        assert title in {p.title for p in problems} and title != own.title and not row.get("end", True)
        assert user.startswith(title + "\n\n") and own.statement in user  # its statement, another's title
    assert len({(r["problem_id"], r["completion"]) for r in swapped}) == 6  # every ordered pair of 3 drawn


OVERLAPPING = ["range-sum-queries", "range-minimum", "max-subarray", "max-pair-product", "longest-run", "gcd-of-array"]


@pytest.mark.parametrize("share", [0.0, 0.5, 1.0])
def test_a_share_of_swapped_title_rows_pairs_titles_that_share_a_word(share):
    """Range Sum Queries, Range Minimum Queries, Maximum Subarray Sum and Maximum Pair Product make
    the 6 ordered pairs of these 6 titles (of 30) that share a word: a uniform draw gives them 6/30
    of the rows, and the overlap share is drawn among them alone."""
    from backend.lab.sft import swapped_title_rows

    problems = [(p, None) for p, _ in build_builtin(None, only=OVERLAPPING, progress=False)]
    rows = swapped_title_rows(problems, replace(LabRecipe(), swapped_title_rows=600, swapped_title_overlap=share))
    titles = {p.id: p.title for p, _ in problems}
    shared = [set(titles[r["problem_id"]].split())
              & set(re.fullmatch(r"Problem: (.+)\.\n", r["completion"]).group(1).split())
              for r in rows]  # fmt: skip
    expected = share + (1 - share) * 6 / 30
    observed = sum(map(bool, shared)) / len(rows)
    assert abs(observed - expected) <= 4 * (expected * (1 - expected) / len(rows)) ** 0.5 + 1e-9, (observed, expected)
    assert {w for s in shared for w in s} == {"Range", "Queries", "Maximum", "Sum"}
    if not share:  # a recipe without the share (build E's) draws its pairs exactly as E was built
        rng = random.Random(LabRecipe().seed + 3)
        uniform = [rng.sample(problems, 2) for _ in rows]
        assert [(r["problem_id"], r["completion"]) for r in rows] == [
            (p.id, f"Problem: {other.title}.\n") for (p, _), (other, _) in uniform
        ]
