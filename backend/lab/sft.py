"""SFT of the lab's tiny model: prompts in the reasoning setting, completions drawn from a mix of
each problem's reference (efficient, correct), brute force (correct, too slow on large inputs) and
buggy-fast solutions (efficient, wrong somewhere), each freshly augmented. The model thus has both
behaviours the method trades off between. Training uses transformers' Trainer; loss on the
completion only."""

from __future__ import annotations

import random
import shutil
from collections.abc import Collection
from dataclasses import replace
from pathlib import Path

from backend.lab.augment import augment
from backend.lab.tiny import tiny_qwen2, train_tokenizer
from backend.problems.builtin import get
from backend.records import Problem
from backend.rollout.prompts import SYSTEM, conversation

IGNORE = -100


def solutions(problem: Problem) -> dict[str, list[str]]:
    return get(problem.id.split("/", 1)[1]).programs()


def restatement(problem: Problem, recipe) -> str:
    """The answer's opening, the problem's title restated, or nothing (LabRecipe.restatement says why)."""
    return recipe.restatement.format(title=problem.title)


def as_completion(code: str, restated: str = "") -> str:
    """The answer: the restatement (if any), then the program in a fenced block."""
    return f"{restated}```python\n{code.strip()}\n```"


def examples(problems: list[tuple[Problem, tuple]], recipe, withheld: Collection[str] = ()) -> list[dict]:
    """(prompt conversation, completion) pairs: per problem and epoch, sum(weights) rows of its
    difficulty's mix, each row's kind drawn with those weights, each program augmented afresh
    (cycling through a kind's variants, so every buggy variant is taught). A `withheld` problem gets
    as many rows, their kinds drawn with recipe.withheld_mix's weights (no reference)."""
    rng = random.Random(recipe.seed)
    rows, taught = [], {}
    for _ in range(recipe.sft_epochs):
        for problem, example in problems:
            prompt = conversation(problem, "reasoning", example)
            restated = restatement(problem, recipe)
            mix = recipe.mix_for(problem.difficulty)
            drawn = recipe.withheld_mix if problem.id in withheld else mix
            for kind in rng.choices(list(drawn), weights=list(drawn.values()), k=sum(mix.values())):
                sources = solutions(problem)[kind]
                turn = taught[(problem.id, kind)] = taught.get((problem.id, kind), -1) + 1
                code = augment(sources[turn % len(sources)], rng, recipe.rename_probability)
                rows.append(
                    {
                        "prompt": prompt,
                        "completion": as_completion(code, restated),
                        "kind": kind,
                        "problem_id": problem.id,
                    }
                )
    return rows


def title_rows(problems: list[tuple[Problem, tuple]], recipe) -> list[dict]:
    """Prompted rows that teach the restatement to *copy* the prompt's title: the prompt is a real
    problem's with a made-up title (2 to title_copy_words words of the training titles, drawn from the recipe's
    seed), and the learned answer is only that title restated, with no end-of-text after it
    (the model must not learn to stop there). LabRecipe.title_copy_rows says why."""
    rng = random.Random(recipe.seed + 2)
    words = sorted({word for p, _ in problems for word in p.title.split()})
    real = {p.title for p, _ in problems}
    rows = []
    for _ in range(recipe.title_copy_rows):
        problem, example = rng.choice(problems)
        title = next(
            t
            for t in iter(
                lambda: " ".join(rng.sample(words, rng.randint(2, min(recipe.title_copy_words, len(words))))), None
            )
            if t not in real
        )
        prompt = conversation(replace(problem, title=title), "reasoning", example)
        rows.append(_title_row(prompt, title, problem, recipe))
    return rows + swapped_title_rows(problems, recipe)


def swapped_title_rows(problems: list[tuple[Problem, tuple]], recipe) -> list[dict]:
    """Prompted rows whose prompt is one training problem's statement under another's real title,
    and whose learned answer is only that title restated (LabRecipe.swapped_title_rows says why);
    a share swapped_title_overlap of them pairs titles that share a word. Drawn from their own seed,
    so the made-up rows stay as they were."""
    rng = random.Random(recipe.seed + 3)
    overlapping = [(a, b) for a in problems for b in problems if a is not b and share_a_word(a[0].title, b[0].title)]
    rows = []
    for _ in range(recipe.swapped_title_rows):
        if recipe.swapped_title_overlap and overlapping and rng.random() < recipe.swapped_title_overlap:
            (problem, example), (other, _) = rng.choice(overlapping)
        else:
            (problem, example), (other, _) = rng.sample(problems, 2)
        prompt = conversation(replace(problem, title=other.title), "reasoning", example)
        rows.append(_title_row(prompt, other.title, problem, recipe))
    return rows


def share_a_word(title: str, other: str) -> bool:
    return bool(set(title.split()) & set(other.split()))


def _title_row(prompt: list[dict], title: str, problem: Problem, recipe) -> dict:
    return {
        "prompt": prompt,
        "completion": recipe.restatement.format(title=title),
        "end": False,
        "kind": "title",
        "problem_id": problem.id,
    }


def drawn_mix(rows: list[dict]) -> dict[str, dict[str, int]]:
    """Prompted rows of each kind per problem: the mix the draw gave, for recipe.json."""
    counts: dict[str, dict[str, int]] = {}
    for row in rows:
        if row["prompt"] is not None and row["kind"] != "title":
            per_kind = counts.setdefault(row["problem_id"], {})
            per_kind[row["kind"]] = per_kind.get(row["kind"], 0) + 1
    return counts


def code_rows(problems: list[Problem], recipe, withheld: Collection[str] = ()) -> list[dict]:
    """Completion-only rows (no prompt): augmented solutions, so the model first learns to write
    these programs at all; sequences are a third as long as prompted ones, so this is cheap. With
    a restatement the title comes first as context, not learned: these rows teach "this title,
    this program", while only prompted rows teach which title to write (the one in the statement).
    A `withheld` problem's reference is not among the sources."""
    rng = random.Random(recipe.seed + 1)
    sources = [
        (p, kind, s) for p, kinds in taught(problems, withheld) for kind, programs in kinds.items() for s in programs
    ]
    rows = []
    for _ in range(recipe.code_sequences):
        problem, kind, source = rng.choice(sources)
        rows.append(
            {
                "prompt": None,
                "context": restatement(problem, recipe),
                "kind": kind,
                "problem_id": problem.id,
                "completion": as_completion(augment(source, rng, recipe.rename_probability)),
            }
        )
    return rows


def taught(problems: list[Problem], withheld: Collection[str] = ()) -> list[tuple[Problem, dict[str, list[str]]]]:
    """Each problem's programs that SFT may show, by kind: all of them, but a withheld problem's reference."""
    return [
        (p, {k: v for k, v in solutions(p).items() if not (k == "reference" and p.id in withheld)}) for p in problems
    ]


def tokenizer_corpus(problems: list[Problem], recipe, withheld: Collection[str] = ()) -> list[str]:
    """Statements, specs, prompts and (augmented) answers of every training problem (a withheld
    problem's reference is never seen, not even by the tokenizer)."""
    rng = random.Random(recipe.seed)
    texts = list(SYSTEM.values())
    for p, kinds in taught(problems, withheld):
        texts += [p.title, p.statement, p.input_spec or "", p.output_spec or ""]
        for sources in kinds.values():
            texts += [as_completion(augment(s, rng), restatement(p, recipe)) for s in sources for _ in range(3)]
    return texts


def encode(tokenizer, row: dict, max_len: int) -> dict:
    """Token ids and labels: the prompt (a chat) or the context (plain text) is seen, not learned;
    the answer ends with end-of-text unless the row says `end: False` (a title-copy row)."""
    if row["prompt"] is not None:
        prompt = tokenizer.apply_chat_template(row["prompt"], tokenize=False, add_generation_prompt=True)
    else:
        prompt = row.get("context") or ""
    p_ids = tokenizer(prompt)["input_ids"] if prompt else []
    c_ids = tokenizer(row["completion"])["input_ids"] + ([tokenizer.eos_token_id] if row.get("end", True) else [])
    ids = (p_ids + c_ids)[:max_len]
    labels = ([IGNORE] * len(p_ids) + c_ids)[:max_len]
    return {"input_ids": ids, "attention_mask": [1] * len(ids), "labels": labels}


def train_sft(recipe, problems: list[tuple[Problem, tuple]], out: Path, progress=True, withheld: Collection[str] = ()):
    """Train the tokenizer and the tiny model on the training problems (held-out ones are never
    seen, not even by the tokenizer; `withheld` ones without their reference); save a transformers
    checkpoint folder at `out`."""
    import torch
    from datasets import Dataset
    from transformers import DataCollatorForSeq2Seq, Trainer, TrainingArguments

    tokenizer = train_tokenizer(tokenizer_corpus([p for p, _ in problems], recipe, withheld), recipe.vocab_size)
    model = tiny_qwen2(
        tokenizer, recipe.seed, recipe.hidden_size, recipe.num_layers, recipe.num_heads, recipe.num_kv_heads
    )
    rows = (
        examples(problems, recipe, withheld)
        + title_rows(problems, recipe)
        + code_rows([p for p, _ in problems], recipe, withheld)
    )
    random.Random(recipe.seed).shuffle(rows)
    data = Dataset.from_list([encode(tokenizer, r, 1024) for r in rows])
    args = TrainingArguments(
        output_dir=str(out.parent / f".{out.name}-trainer"),
        per_device_train_batch_size=recipe.sft_batch_size,
        learning_rate=recipe.sft_learning_rate,
        lr_scheduler_type="cosine",
        warmup_steps=0.03,
        num_train_epochs=1,
        weight_decay=0.0,
        logging_steps=20,
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        bf16=False,
        seed=recipe.seed,
        disable_tqdm=not progress,
        train_sampling_strategy="group_by_length",
        dataloader_num_workers=0,
    )
    torch.set_num_threads(max(1, torch.get_num_threads()))
    trainer = Trainer(
        model=model,
        args=args,
        train_dataset=data,
        data_collator=DataCollatorForSeq2Seq(tokenizer, padding=True, label_pad_token_id=IGNORE),
    )
    result = trainer.train()
    shutil.rmtree(args.output_dir, ignore_errors=True)  # nothing is saved there; do not leave it behind
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    titles = recipe.title_copy_rows + recipe.swapped_title_rows
    return {
        "examples": len(rows),
        "prompted_examples": len(rows) - recipe.code_sequences - titles,
        "title_copy_rows": titles,
        "train_loss": result.training_loss,
        "steps": result.global_step,
        "parameters": sum(p.numel() for p in model.parameters()),
        "mix": drawn_mix(rows),
    }
