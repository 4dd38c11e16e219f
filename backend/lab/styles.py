"""Which of the SFT programs a sampled program is a variant of: reference-style (efficient and
correct), brute-force-style (correct, too slow on large inputs) or buggy-fast; "other" when it is
close to none. This is how the lab tells whether its two RL endpoints differ for the paper's
reason (θ_low, rewarded by R_k for a small k, keeps brute force; θ_high does not).

A program is compared with each SFT source of its problem after both are reduced to a token
sequence with the program's own names replaced by one placeholder (SFT renamed them at random,
and a tiny model renames them too): the nearest source's kind wins if the similarity
(difflib's ratio) is at least MATCH, else "other".
"""

from __future__ import annotations

import ast
import difflib
import io
import tokenize
import warnings

from backend.lab.augment import own_names

MATCH = 0.75  # fixed before the build; below it a program resembles no SFT variant enough to be named
STYLES = ("reference", "brute", "buggy", "other", "no program")


def shape(code: str) -> list[str] | None:
    """Tokens with the program's own names folded to one placeholder; None if it does not parse."""
    try:
        with warnings.catch_warnings():  # a sampled program may hold odd literals: it is data here
            warnings.simplefilter("ignore", SyntaxWarning)
            names = own_names(ast.parse(code))
        tokens = tokenize.generate_tokens(io.StringIO(code).readline)
        return [
            ("NAME" if t.string in names else t.string)
            for t in tokens
            if t.type
            not in (
                tokenize.COMMENT,
                tokenize.NL,
                tokenize.NEWLINE,
                tokenize.INDENT,
                tokenize.DEDENT,
                tokenize.ENDMARKER,
            )
        ]
    except (SyntaxError, tokenize.TokenError, IndentationError, ValueError):
        return None


def style_of(code: str | None, sources: dict[str, list[str]]) -> str:
    """The kind of the SFT source nearest to `code` ({kind: [source, …]} of its problem)."""
    return nearest(code, {kind: [shape(s) for s in programs] for kind, programs in sources.items()})


def nearest(code: str | None, shapes: dict[str, list[list[str] | None]]) -> str:
    if not code:
        return "no program"
    mine = shape(code)
    if mine is None:
        return "other"
    kind, best = closest(mine, shapes)
    return kind if best >= MATCH else "other"


def closest(mine: list[str], shapes: dict) -> tuple:
    """(the key of the nearest shape, its similarity), over {key: [shape, …]}; (None, 0) if none."""
    best, key = 0.0, None
    matcher = difflib.SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(mine)  # difflib caches facts about the second sequence
    for name, theirs_list in shapes.items():
        for theirs in theirs_list:
            if not theirs:
                continue
            matcher.set_seq1(theirs)
            if matcher.real_quick_ratio() > best and matcher.quick_ratio() > best and (r := matcher.ratio()) > best:
                best, key = r, name
    return key, best


def sft_sources(problem_id: str) -> dict[str, list[str]]:
    """The SFT programs of a builtin problem (lab problems are builtin ones), by kind."""
    from backend.problems.builtin import get

    return get(problem_id.split("/", 1)[1]).programs()


def style_shares(store, experiment: str, problems: set[str] | None = None):
    """Per checkpoint on the α axis, the share of its samples in each style, pooled over samples,
    with a bootstrap 95% CI over problems: a polars frame with label, alpha, style, share, share_lo,
    share_hi (the Overview's chart, and bench/lab_targets.py's figures); with `problems`, on those
    problems only (the held-in ones, where a figure says so)."""
    import numpy as np
    import polars as pl

    from backend.analysis.frame import bootstrap_weights, percentile_ci
    from backend.records import Checkpoint

    points = {c.id: c for c in store.select(Checkpoint) if c.alpha is not None}
    counts: dict[str, dict[str, dict[str, int]]] = {}  # checkpoint → problem → style → samples
    for (checkpoint, problem, _), style in sample_styles(store, experiment, set(points)).items():
        if problems is None or problem in problems:
            counts.setdefault(checkpoint, {}).setdefault(problem, dict.fromkeys(STYLES, 0))[style] += 1
    names = sorted({p for by in counts.values() for p in by})
    W = bootstrap_weights(len(names), 1000, 0)
    rows = []
    for c, by_problem in counts.items():
        per = np.array([[by_problem.get(p, dict.fromkeys(STYLES, 0))[s] for s in STYLES] for p in names], float)
        n = per.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            lo, hi = percentile_ci((W @ per) / (W @ n)[:, None])
        for i, style in enumerate(STYLES):
            rows.append(
                {
                    "label": points[c].label,
                    "alpha": points[c].alpha,
                    "style": style,
                    "share": per[:, i].sum() / n.sum(),
                    "share_lo": float(lo[i]),
                    "share_hi": float(hi[i]),
                }
            )
    schema = {
        "label": pl.String,
        "alpha": pl.Float64,
        "style": pl.String,
        "share": pl.Float64,
        "share_lo": pl.Float64,
        "share_hi": pl.Float64,
    }
    return pl.DataFrame(rows, schema=schema).sort("alpha")


def sample_styles(store, experiment: str, checkpoints: set[str]) -> dict[tuple[str, str, int], str]:
    """The style of each sample of `checkpoints` in the experiment, by (checkpoint, problem, sample index)."""
    from backend.records import Sample

    shapes: dict[str, dict] = {}
    styles = {}
    for s in store.select(Sample, {"experiment_id": experiment}):
        if s.checkpoint_id not in checkpoints:
            continue
        if s.problem_id not in shapes:
            shapes[s.problem_id] = {k: [shape(p) for p in v] for k, v in sft_sources(s.problem_id).items()}
        styles[s.checkpoint_id, s.problem_id, s.sample_idx] = nearest(s.code, shapes[s.problem_id])
    return styles


def other_problem(code: str | None, problem_id: str, shapes: dict[str, list]) -> bool:
    """Whether `code` is another problem's program: its nearest SFT program over every problem's
    ({problem id: [shape, …]}) belongs to another problem and is at least MATCH alike."""
    mine = shape(code) if code else None
    if mine is None:
        return False
    owner, best = closest(mine, shapes)
    return owner != problem_id and best >= MATCH


def confusion_shares(store, experiment: str, problems: set[str] | None = None):
    """Per checkpoint of the sweep, the share of its samples (on `problems`, default all) that are
    another problem's program (issue #29's problem confusion): a polars frame with label, alpha,
    share, samples, by α; checkpoints off the α axis (the lab's SFT overlay) last, alpha null, so
    what SFT leaves can be told from what RL removes."""
    import polars as pl

    from backend.records import Checkpoint, Sample

    points = {c.id: c for c in store.select(Checkpoint)}
    swept = [s for s in store.select(Sample, {"experiment_id": experiment}) if s.checkpoint_id in points]
    shapes = {  # every swept problem's programs are candidates, whichever problems are counted
        pid: [shape(p) for kind in sft_sources(pid).values() for p in kind] for pid in {s.problem_id for s in swept}
    }
    samples = [s for s in swept if problems is None or s.problem_id in problems]
    confused: dict[str, list[bool]] = {}
    seen: dict[tuple, bool] = {}  # at low temperature many samples repeat a program
    for s in samples:
        key = (s.code, s.problem_id)
        if key not in seen:  # own problem first: its similarity prunes most other comparisons
            seen[key] = other_problem(s.code, s.problem_id, {s.problem_id: shapes[s.problem_id]} | shapes)
        confused.setdefault(s.checkpoint_id, []).append(seen[key])
    rows = [
        {"label": points[c].label, "alpha": points[c].alpha, "share": sum(v) / len(v), "samples": len(v)}
        for c, v in confused.items()
    ]
    schema = {"label": pl.String, "alpha": pl.Float64, "share": pl.Float64, "samples": pl.Int64}
    return pl.DataFrame(rows, schema=schema).sort("alpha", nulls_last=True)


def restates_title(completion: str | None, title: str, restatement: str) -> bool:
    """Whether a sample opens with `title` restated as the lab's SFT taught (`restatement`, a format
    with {title}): in build C nearly every sample that was another problem's program had restated
    another title first (docs/lab.md)."""
    return bool(restatement) and (completion or "").startswith(restatement.format(title=title))
