"""Does a lab checkpoint copy the title its prompt starts with? Greedy answers to every held-in
problem's prompt (its real title), to 60 prompts whose title is made up of 2-4 training-title
words (drawn from a fixed seed, never a real title), and to each held-in problem's statement under
every other held-in title that shares a word with its own (Range Sum Queries under Range Minimum
Queries), counted as exact restatements. The lab's SFT teaches the answer to open with the title
restated (LabRecipe.restatement), and a sample that restates another title writes another
problem's program (bench/lab_targets.py), so this says whether the model reads the title or
recalls one from the statement. About 20 s on 2 cores.

    .venv/bin/python bench/lab_title_copy.py [--checkpoint artifacts/lab/checkpoints/sft]
        [--artifacts artifacts/lab] [--restatement 'Problem: {title}.\\n']
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.lab.problems import HELD_IN, lab_problems, split_of, store_lab_problems, with_limits
from backend.lab.recipe import LabRecipe
from backend.lab.sft import share_a_word
from backend.rollout.prompts import conversation
from backend.rollout.run import public_example
from backend.store import Store

MADE_UP = 60


def held_in_prompts(manifest: dict) -> list[tuple]:
    """(problem under its recorded limit, public example) for each held-in problem of the build,
    stored and read back as the build does before SFT (lab/build.py)."""
    limits = {pid: report["limit_s"] for pid, report in manifest["problems"].items()}
    built = with_limits(lab_problems(LabRecipe.from_dict(manifest["recipe"]), progress=False), limits)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "lab.duckdb")
        return [(p, public_example(store, p)) for p, _ in store_lab_problems(store, built) if split_of(p) == HELD_IN]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint", type=Path, default=Path("artifacts/lab/checkpoints/sft"))
    parser.add_argument(
        "--artifacts", type=Path, default=Path("artifacts/lab"), help="its recipe.json: limits, problems"
    )
    parser.add_argument("--restatement", help="the format the checkpoint was taught (default: the recipe's)")
    args = parser.parse_args()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    manifest = json.loads((args.artifacts / "recipe.json").read_text())
    fmt = args.restatement or LabRecipe.from_dict(manifest["recipe"]).restatement
    fmt = fmt.encode().decode("unicode_escape")  # a shell passes "\n" as two characters
    tokenizer = AutoTokenizer.from_pretrained(args.checkpoint)
    model = AutoModelForCausalLM.from_pretrained(args.checkpoint).eval()

    def restates(problem, example, title: str) -> bool:
        chat = conversation(replace(problem, title=title), "reasoning", example)
        ids = tokenizer(tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True))["input_ids"]
        with torch.no_grad():
            out = model.generate(torch.tensor([ids]), max_new_tokens=24, do_sample=False)
        said = tokenizer.decode(out[0, len(ids) :]).split("```")[0]
        return said.split() == fmt.format(title=title).split()

    prompts = held_in_prompts(manifest)
    missed = [p.title for p, example in prompts if not restates(p, example, p.title)]
    words, real = sorted({w for p, _ in prompts for w in p.title.split()}), {p.title for p, _ in prompts}
    rng, copied = random.Random(123), 0
    for _ in range(MADE_UP):
        problem, example = rng.choice(prompts)
        title = next(t for t in iter(lambda: " ".join(rng.sample(words, rng.randint(2, 4))), None) if t not in real)
        copied += restates(problem, example, title)
    pairs = [
        (p, example, q.title)
        for p, example in prompts
        for q, _ in prompts
        if p is not q and share_a_word(p.title, q.title)
    ]
    swapped = sum(restates(*pair) for pair in pairs)
    print(
        f"{args.checkpoint}: real titles restated exactly {len(prompts) - len(missed)} of {len(prompts)}; "
        f"made-up titles copied exactly {copied} of {MADE_UP}; another real title sharing a word with the "
        f"statement's own restated exactly {swapped} of {len(pairs)} (greedy)"
    )
    print("  real titles missed: " + ", ".join(missed))


if __name__ == "__main__":
    main()
