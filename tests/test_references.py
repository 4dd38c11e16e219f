"""Every file a comment or docstring names exists (issue #48): in this repository, or, when the
line names another project (vLLM, mergekit, LiveCodeBench, …), in that project, or it is a file
the program itself writes at run time."""

import ast
import io
import re
import subprocess
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.(?:md|py|sql|sh|toml|json|txt|yaml|yml|h|cpp))\b")
# a line that names one of these cites that project's files, not ours
OTHER_PROJECTS = re.compile(
    r"vllm|mergekit|lcb_runner|LCB|LiveCodeBench|TRL|transformers|Hugging ?Face|kaleido|\bray[._/]|\bRAY_", re.I
)
# vLLM's own source files (the release requirements-gpu.txt pins), which the engine contract cites by path
VLLM_FILES = re.compile(
    r"^(v1/|entrypoints/|renderers/|config/(model|cache)\.py|sampling_params\.py|core_client\.py|gumbel\.py"
    r"|kv_cache_(utils|interface)\.py|serial_utils\.py|envs\.py"
    r"|(serve/engine/|chat_completion/|completion/)?protocol\.py)"
)
WRITTEN_AT_RUN_TIME = {
    "trainer_state.json": "TRL's checkpoint state, read from a run's output folder",
    "dataset_info.json": "a Hugging Face dataset's metadata in the download cache",
    "gpu_check.json": "bench/gpu_check.py's own report",
    "prog.cpp": "the program source the sandbox writes for a C++ sample",
    "prog.py": "a Python sample's source, as `python3 prog.py` runs it",
    "gpu_check_rl.json": "bench/gpu_check.py --rl's own report",
    "folder/report.md": "what `lab build` writes into its output folder",
    ".pins/JOB.json": "a running sweep's pin file in the merge cache",
    "x.json": "an example output path in a usage line",
    "chat_template.json": "a checkpoint's legacy chat-template file, which a merge copies into its folder",
    "manifest.json": "the figure export zip's record of how its files were made (dashboard/exports.py)",
    "merge.json": "a merged checkpoint's record of its inputs, written into its folder (backend/merge/engine.py)",
    "db/migrations/NNN.sql": "the pattern of the migrations' names",
}


def commented_lines(path: Path) -> list[str]:
    """The lines of the file's comments and docstrings, each with the line before it for context."""
    source = path.read_text()
    if path.suffix == ".sql":
        chunks = [line for line in source.splitlines() if "--" in line]
    else:
        chunks = [
            t.string for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.COMMENT
        ]
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                chunks.append(ast.get_docstring(node) or "")
    lines = [line for chunk in chunks for line in chunk.splitlines()]
    return [f"{before} {line}" for before, line in zip(["", *lines], lines, strict=False)]


# a migration that has run on users' databases keeps its text, naming the modules of its day
FROZEN = {"db/migrations/005.sql": {"backend/grading/verdicts.py"}}


def test_every_file_a_comment_names_exists():
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    missing = []
    for name in tracked:
        path = ROOT / name
        if path.suffix not in (".py", ".sql") or not path.is_file():
            continue
        for line in commented_lines(path):
            for ref in REFERENCE.findall(line):
                if ref in WRITTEN_AT_RUN_TIME or OTHER_PROJECTS.search(line) or VLLM_FILES.match(ref):
                    continue
                if ref in FROZEN.get(name, ()):
                    continue
                if (path.parent / ref).exists() or any(t == ref or t.endswith("/" + ref) for t in tracked):
                    continue
                missing.append(f"{name}: {ref}")
    assert missing == []
