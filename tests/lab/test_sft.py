"""The SFT rows of the lab: what the tiny model is taught to write, read back the way a rollout
reads a sample (backend/rollout/extract.py)."""

import ast
import re
from dataclasses import replace

from backend.lab.recipe import LabRecipe
from backend.lab.sft import IGNORE, code_rows, encode, examples, solutions
from backend.problems.build import build_builtin
from backend.rollout.extract import extract_code

SLUGS = ["longest-run", "balanced-brackets", "sliding-window-max"]


def _rows(recipe):
    problems = [p for p, _ in build_builtin(None, only=SLUGS, progress=False)]
    return problems, examples([(p, None) for p in problems], recipe) + code_rows(problems, recipe)


def test_answers_restate_the_title_then_hold_one_program_the_rollout_extracts():
    recipe = replace(LabRecipe(), sft_epochs=2, code_sequences=30)
    problems, rows = _rows(recipe)
    titles = {p.title for p in problems}
    assert len(rows) == 2 * 3 * sum(recipe.mix.values()) + 30
    for row in rows:
        text = row["completion"] if row["prompt"] is not None else row["context"] + row["completion"]
        head, _, rest = text.partition("\n")
        title = re.fullmatch(r"Problem: (.+)\.", head).group(1)
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
    recipe = replace(LabRecipe(), sft_epochs=1, code_sequences=5, restate_title=False)
    problems, rows = _rows(recipe)
    assert all(row["completion"].startswith("```python\n") for row in rows)
    # each program kind of each problem is taught, in the recipe's proportions
    kinds = [row["kind"] for row in rows if row["prompt"] is not None]
    assert {k: kinds.count(k) for k in recipe.mix} == {k: 3 * n for k, n in recipe.mix.items()}
    assert all(solutions(p)["buggy"] for p in problems)


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
