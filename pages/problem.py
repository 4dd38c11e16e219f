"""Problem drill-down: the statement, outcomes per α, every sample with its code and test ladder."""

import pandas as pd
import streamlit as st

from pages import data

data.require_app_shell()

st.title("Problem")
exp = data.experiment_picker()
if not exp:
    st.stop()
o = data.load_outcomes(exp, {"difficulty": None, "platform": None, "setting": None})
if o is None:
    st.stop()
wanted = st.query_params.get("problem")
pid = st.selectbox("Problem", o.problems, index=o.problems.index(wanted) if wanted in o.problems else 0,
                   format_func=lambda p: f"{o.titles[o.problems.index(p)]}  ({p})")  # fmt: skip
st.query_params["problem"] = pid
problem, tests = data.problem(pid)
if problem is None:
    st.warning(f"{pid} is not in the problems table.")
    st.stop()
st.caption(
    f"{problem.difficulty or ''} · time limit {problem.time_limit_s:g}s · memory {problem.memory_limit_mb} MB · {len(tests)} tests"
)
with st.expander("Statement", expanded=False):
    st.markdown(problem.statement)
    if problem.input_spec:
        st.markdown(f"**Input.** {problem.input_spec}\n\n**Output.** {problem.output_spec}")

p = o.problems.index(pid)
st.subheader("Outcomes per checkpoint")
st.dataframe(pd.DataFrame({"checkpoint": o.labels, "α": o.alphas, **{k: v[p] for k, v in o.counts.items()}, "samples": o.n[p]}),
             hide_index=True, width="stretch")  # fmt: skip

samples, evals = data.problem_samples(exp, pid)
by_key = {(e.checkpoint_id, e.sample_idx): e for e in evals}
labels = dict(zip(o.checkpoints, o.labels, strict=True))
ckpt = st.selectbox("Samples of", o.checkpoints, format_func=labels.get)
for s in [s for s in samples if s.checkpoint_id == ckpt]:
    e = by_key.get((s.checkpoint_id, s.sample_idx))
    verdict = f"{e.outcome} ({e.verdict})" if e else "not judged yet"
    with st.expander(f"sample {s.sample_idx}: {verdict}"):
        if e and e.cpu_s is not None:
            st.caption(
                f"CPU {e.cpu_s:.3f} s · memory {e.mem_mb or 0:.1f} MB (largest test) · "
                f"accounting: {e.accounting or 'not recorded (judged before v3)'}"
            )
        if s.code:
            st.code(s.code, language="python")
        else:
            st.warning(f"format failure: {s.extract_error}")
        if e and e.test_results:
            ladder = pd.DataFrame([t for t in e.test_results if "index" in t])
            if not ladder.empty:
                ladder["time limit"] = problem.time_limit_s
                ladder["memory limit"] = problem.memory_limit_mb
                st.dataframe(ladder, hide_index=True, width="stretch")
        if s.setting in ("tool", "agentic") and s.transcript:
            st.markdown("**Transcript**")
            for turn in s.transcript:
                st.chat_message(
                    turn["role"]
                    if turn["role"] in ("user", "assistant")
                    else "ai"
                    if turn["role"] == "tool"
                    else "human"
                ).write(turn["content"])
        elif s.completion:
            st.text(s.completion[:4000])
