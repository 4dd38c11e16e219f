"""Launch: α sweeps, evals and imports, validated by the same spec classes as the CLI."""

import streamlit as st

from backend.errors import UserError
from backend.jobs import runner
from backend.jobs.spec import EvalSpec, ImportSpec, SweepSpec, validate_spec
from backend.records import Checkpoint
from backend.rl.rewards import BINARY
from backend.rl.trainer import RLSpec
from pages import data

data.require_app_shell()

st.title("Launch")
store = data._store(data.db_path())
try:
    registered = {c.path: f"{c.label} ({c.kind})" for c in store.select(Checkpoint) if not c.path.startswith("live:")}
except UserError as err:
    st.error(str(err))
    st.stop()


def checkpoint_field(label: str, key: str) -> str:
    options = ["(type a path)", *registered]
    pick = st.selectbox(label, options, key=f"{key}-pick", format_func=lambda p: registered.get(p, p))
    typed = st.text_input(f"{label}: path", key=f"{key}-path", placeholder="/path/to/checkpoint")
    return typed.strip() or ("" if pick == options[0] else pick)


def sampling_fields(prefix: str) -> dict:
    c1, c2, c3, c4 = st.columns(4)
    return {
        "bench": c1.text_input("Benchmark", "builtin", key=f"{prefix}-bench"),
        "difficulty": c2.selectbox(
            "Difficulty", [None, "easy", "medium", "hard"], key=f"{prefix}-diff", format_func=lambda d: d or "all"
        ),
        "limit": c3.number_input("At most N problems (0 = all)", 0, 100000, 0, key=f"{prefix}-limit") or None,
        "setting": c4.selectbox("Setting", ["reasoning", "tool", "agentic"], key=f"{prefix}-setting"),
        "n": c1.number_input("Samples per problem", 0, 1024, 8, key=f"{prefix}-n"),  # 0 gets a message, not a no-op
        "temperature": c2.number_input("Temperature", 0.0, 2.0, 1.0, key=f"{prefix}-temp"),
        "top_p": c3.number_input("top-p", 0.01, 1.0, 1.0, key=f"{prefix}-topp"),
        "max_tokens": c4.number_input("Max tokens", 1, 32768, 1024, key=f"{prefix}-maxtok"),
        "seed": c1.number_input("Seed", 0, 2**31 - 1, 0, key=f"{prefix}-seed"),
        "engine": c2.selectbox("Engine", ["auto", "transformers", "vllm"], key=f"{prefix}-engine"),
        "executor": c3.selectbox("Executor", ["local", "ray"], key=f"{prefix}-exec"),
        "judge_backend": c4.selectbox("Sandbox", ["bwrap", "docker"], key=f"{prefix}-sandbox"),
        "time_limit_s": c1.number_input("Time limit override (s, 0 = problem's)", 0.0, 60.0, 0.0, key=f"{prefix}-tl")
        or None,
        "memory_limit_mb": c2.number_input("Memory override (MB, 0 = problem's)", 0, 65536, 0, key=f"{prefix}-ml")
        or None,
    }


FORM_ERRORS = {  # what the form says, in its own words, before the spec's own checks
    "checkpoints": "checkpoint folders: give at least one folder, one per line",
    "n": "samples per problem: at least 1",
}


def submit(cls, payload: dict) -> None:
    if "checkpoints" in payload and not payload["checkpoints"]:
        st.error(FORM_ERRORS["checkpoints"])
        return
    if payload.get("n") == 0:
        st.error(FORM_ERRORS["n"])
        return
    try:
        spec = validate_spec(cls, payload)
        job = runner.create_job(store, spec)
        runner.start(store, job.id)
    except UserError as err:
        st.error(str(err))
        return
    st.success(f"Job {job.id} started (experiment {job.experiment_id}).")
    st.page_link("pages/jobs.py", label=f"Follow job {job.id} on the Jobs page", query_params={"job": job.id})


sweep_tab, eval_tab, rl_tab, import_tab = st.tabs(["α sweep", "Eval checkpoints", "RL (GRPO)", "Import problems"])
with sweep_tab, st.form("sweep"):
    low = checkpoint_field("θ_low (α = 0)", "low")
    high = checkpoint_field("θ_high (α = 1)", "high")
    alphas = st.text_input(
        "α grid", "-0.5:1.5:0.25", help="-1:2:0.25 (inclusive range), -0.5,0,0.5,1,1.5, or both mixed"
    )
    live = st.checkbox("Switch α in the loaded model (write no merged folders)")
    options = sampling_fields("sweep")
    if st.form_submit_button("Launch sweep", type="primary"):
        submit(SweepSpec, {"low": low, "high": high, "alphas": alphas, "keep_merged": not live, **options})
with eval_tab, st.form("eval"):
    paths = st.text_area("Checkpoint folders, one per line", placeholder="/runs/R1\n/runs/R3")
    options = sampling_fields("eval")
    if st.form_submit_button("Launch eval", type="primary"):
        submit(EvalSpec, {"checkpoints": [p.strip() for p in paths.splitlines() if p.strip()], **options})
with rl_tab, st.form("rl"):
    base = checkpoint_field("Base / SFT checkpoint", "rl-base")
    c1, c2, c3 = st.columns(3)
    rl = {
        "reward": c1.selectbox("Reward", [*BINARY, "partial_discrete", "partial_continuous"], index=len(BINARY) - 1,
                               help="R_k: pass every test with input < 10^k characters; partial: credit per tier/test"),
        "output_dir": c2.text_input("Output folder", placeholder="/runs/grpo-R_inf"),
        "bench": c3.text_input("Benchmark", "builtin", key="rl-bench"),
        "difficulty": c1.selectbox("Difficulty", [None, "easy", "medium", "hard"], key="rl-diff",
                                   format_func=lambda d: d or "all"),
        "limit": c2.number_input("At most N problems (0 = all)", 0, 100000, 0, key="rl-limit") or None,
        "steps": c3.number_input("Steps (max_steps)", 1, 1_000_000, 100),
        "num_generations": c1.number_input("num_generations", 2, 256, 8),
        "per_device_train_batch_size": c2.number_input("per_device_train_batch_size", 1, 4096, 8),
        "max_completion_length": c3.number_input("max_completion_length", 1, 65536, 512),
        "learning_rate": c1.number_input("learning_rate", 0.0, 1.0, 1e-6, format="%.2e"),
        "beta": c2.number_input("beta (KL)", 0.0, 10.0, 0.0),
        "loss_type": c3.selectbox("loss_type", ["dapo", "grpo", "bnpo", "dr_grpo"]),
        "save_steps": c1.number_input("save_steps", 1, 1_000_000, 50),
        "seed": c2.number_input("Seed", 0, 2**31 - 1, 0, key="rl-seed"),
        "use_vllm": c3.checkbox("Colocated vLLM generation (GPU)"),
        "executor": c1.selectbox("Executor", ["local", "ray"], key="rl-exec", help="ray places training on a GPU node"),
        "num_gpus": c2.number_input("GPUs (ray)", 0.0, 8.0, 1.0),
    }  # fmt: skip
    if st.form_submit_button("Launch RL job", type="primary"):
        if not rl["output_dir"].strip():
            st.error("output folder: give a folder for the checkpoints, e.g. /runs/grpo-R_inf")
        else:
            submit(RLSpec, {"base": base, **rl, "output_dir": rl["output_dir"].strip()})
with import_tab, st.form("import"):
    source = st.selectbox(
        "Source",
        ["builtin", "lcb", "ccplus"],
        format_func={
            "builtin": "our tiered benchmark",
            "lcb": "LiveCodeBench (local files)",
            "ccplus": "CodeContests+ (Parquet)",
        }.get,
    )
    path = st.text_input("Local path (LiveCodeBench / CodeContests+)")
    version = st.text_input("LiveCodeBench version (empty: all the source holds)", "")
    if st.form_submit_button("Import"):
        try:
            spec = validate_spec(
                ImportSpec, {"source": source, "path": path or None, "version": version.strip() or None}
            )
            if spec.source != "builtin" and not spec.path:
                raise UserError(f"importing {spec.source} needs the local path of the dataset")
            with st.spinner("Importing…"):
                if spec.source == "builtin":
                    from backend.problems.build import build_builtin

                    built = build_builtin(store, progress=False)
                    st.success(f"Imported {len(built)} problems.")
                elif spec.source == "lcb":
                    from backend.problems.importing import import_lcb
                    from backend.problems.lcb import LCBFilter

                    st.success(
                        import_lcb(store, spec.path, LCBFilter(spec.version), progress=False).line("LiveCodeBench")
                    )
                else:
                    from backend.problems.ccplus import CCPlusFilter
                    from backend.problems.importing import import_ccplus

                    st.success(import_ccplus(store, spec.path, CCPlusFilter(), progress=False).line("CodeContests+"))
        except UserError as err:
            st.error(str(err))
