"""The Problem page's samples view: two samples side by side, each with its code, verdict ladder and
first failing test, and the diff between them (layout only; backend/analysis/samples.py reads them)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from backend.alpha import alpha_label, alpha_text
from backend.analysis.frame import Outcomes
from backend.analysis.samples import NOT_RUN, code_diff, first_failure, first_failure_line, ladder, prose
from backend.outcomes import OPTIMIZATION, Verdict
from backend.records import Evaluation, Problem, Sample, Test
from dashboard import view

VERDICT_COLORS = {Verdict.AC: "#c9ecd9", NOT_RUN: "#eeeeee"} | {v: "#fbe3b8" for v in OPTIMIZATION}
FAILED_COLOR = "#f7c9b8"  # any other verdict: a correctness failure
LADDER_ROW, SCROLLBAR = 35, 16  # px: the ladder's rows and the grid's horizontal scroll bar


def point_name(o: Outcomes, i: int) -> str:
    """How a checkpoint is named in the URL: its α as written (e.g. -0.5), or its label when it has none."""
    a = o.alphas[i]
    return alpha_text(a) if a is not None else o.labels[i]


def default_pair(o: Outcomes) -> tuple[str, str]:
    """The endpoints (α = 0 and 1) when the experiment has them, else its first and last checkpoints."""
    names = [point_name(o, i) for i in range(len(o.checkpoints))]
    return ("0" if "0" in names else names[0]), ("1" if "1" in names else names[-1])


def samples_view(
    o: Outcomes, problem: Problem, samples: list[Sample], evals: list[Evaluation], tests: list[Test] = ()
) -> None:
    st.subheader("Samples compared across α")
    names = [point_name(o, i) for i in range(len(o.checkpoints))]
    shown = {n: alpha_label(a, spaced=True) if a is not None else n for n, a in zip(names, o.alphas, strict=True)}
    labels = {n: alpha_label(a) if a is not None else n for n, a in zip(names, o.alphas, strict=True)}
    low, high = default_pair(o)
    if (
        view.get("alpha") == view.get("vs") and view.get("alpha") is not None
    ):  # a link naming one α: compare it with an endpoint
        view.put("vs", low if view.get("alpha") == high else high)
    by_key = {(e.checkpoint_id, e.sample_idx): e for e in evals}
    sides = []
    for col, key, default in zip(st.columns(2), ("alpha", "vs"), (low, high), strict=True):
        with col:
            name = view.bound(
                st.selectbox,
                key,
                "α" if key == "alpha" else "compared with α",
                names,
                default=default,
                format_func=shown.get,
            )
            ckpt = o.checkpoints[names.index(name)]
            mine = sorted((s for s in samples if s.checkpoint_id == ckpt), key=lambda s: s.sample_idx)
            if not mine:
                st.info("No samples of this checkpoint on this problem.")
                sides.append((name, None))
                continue
            by_idx = {s.sample_idx: s for s in mine}
            idx = st.selectbox(
                "Sample",
                list(by_idx),
                key=f"sample-{key}-{ckpt}",
                format_func=lambda i, c=ckpt: f"sample {i}: {_outcome(by_key.get((c, i)))}",
            )
            sample = by_idx[idx]
            one_sample(sample, by_key.get((ckpt, sample.sample_idx)), problem, {t.idx: t for t in tests})
            sides.append((name, sample))
    (a, left), (b, right) = sides
    if left is not None and right is not None:
        st.markdown(f"**Diff: {shown[a]} → {shown[b]}**")
        diff = code_diff(
            left.code, right.code, f"{labels[a]} sample {left.sample_idx}", f"{labels[b]} sample {right.sample_idx}"
        )
        st.code(diff or "(the two programs are identical)", language="diff")


def _outcome(e: Evaluation | None) -> str:
    return f"{e.outcome} ({e.verdict})" if e else "not judged yet"


INPUT_SHOWN = 2048  # characters of a failing test's input shown; the whole is a download
MEMORY = "peak memory, MB above the interpreter's baseline"


def one_sample(s: Sample, e: Evaluation | None, problem: Problem, tests: dict[int, Test] | None = None) -> None:
    st.markdown(f"**{_outcome(e)}**")
    if e is not None:
        st.markdown(first_failure_line(e.test_results, problem.time_limit_s))
    if s.code:
        st.code(s.code, language="cpp" if "#include" in s.code else "python", line_numbers=True)
    else:
        st.warning(f"format failure: {(e.format_reason if e else None) or s.extract_error}")
    if e and e.test_results:
        rows = pd.DataFrame(ladder(e.test_results)).rename(columns={"memory MB": MEMORY})
        if not rows.empty:
            # a test after the first failure never ran: say so, not None; times to the ms, memory to 0.01 MB
            for column, digits in (("CPU s", 3), (MEMORY, 2)):
                rows[column] = [NOT_RUN if v != v or v is None else f"{v:.{digits}f}" for v in rows[column]]
            styled = rows.style.map(
                lambda v: f"background-color: {VERDICT_COLORS.get(v, FAILED_COLOR)}", subset=["verdict"]
            )
            # every row and the header at a fixed row height, plus room for a horizontal scroll bar,
            # which otherwise covered the last row on a narrow column
            height = min(LADDER_ROW * (len(rows) + 1) + SCROLLBAR + 3, 600)
            st.dataframe(styled, hide_index=True, width="stretch", row_height=LADDER_ROW, height=height)
            st.caption(
                f"Tests in ascending input length; time limit {problem.time_limit_s:g} s, memory "
                f"{problem.memory_limit_mb} MB. Judging stops at the first failure: later tests are {NOT_RUN}."
            )
        failed = first_failure(e.test_results)
        if failed and failed.detail:
            with st.expander("Failure detail: the checker's message or the end of stderr (traceback)"):
                st.code(failed.detail, language="text")
        if failed and (test := (tests or {}).get(failed.index)) and test.input is not None:
            failing_input(test, f"{s.checkpoint_id}-{s.sample_idx}")
    if s.setting in ("tool", "agentic") and s.transcript:
        with st.expander("Transcript"):
            for turn in s.transcript:
                role = (
                    turn["role"]
                    if turn["role"] in ("user", "assistant")
                    else "ai"
                    if turn["role"] == "tool"
                    else "human"
                )
                st.chat_message(role).write(turn["content"])
    elif prose(s.completion):
        with st.expander("What the model wrote around the code"):
            st.text(prose(s.completion)[:4000])


def failing_input(test: Test, key: str) -> None:
    """The first failing test's input: its first 2 kB, and the whole as a download."""
    with st.expander(f"Input of the first failing test (test {test.idx}, {test.input_len:,} characters)"):
        cut = test.input[:INPUT_SHOWN]
        st.code(cut + ("\n…" if len(test.input) > INPUT_SHOWN else ""), language="text")
        st.download_button(
            "Download the whole input",
            test.input,
            f"{test.problem_id.replace('/', '_')}-test{test.idx}.in",
            "text/plain",
            key=f"input-{key}-{test.idx}",
        )
