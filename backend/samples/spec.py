"""The `samples import` command's config: a file of samples made elsewhere, judged and stored as an
experiment of its own (backend/samples/importer.py). The CLI and the Launch page's form derive from it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from backend.grading.limits import MIN_MEMORY_MB
from backend.specs import HIDDEN
from backend.vocab import SandboxBackend, Setting

SampleFormat = Literal["auto", "jsonl", "lcb"]


class SampleImportSpec(BaseModel):
    """`python -m backend samples import FILE` and the Launch page's "Import samples" form."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    kind: Literal["import"] = Field("import", json_schema_extra=HIDDEN)
    file: str = Field(title="Samples file", json_schema_extra={"cli": False})
    """The file: JSONL, one sample a line ({"problem_id", "checkpoint", "completion" or "code", and optionally
    "alpha" with "low" and "high", "sample_idx", "setting"}), or LiveCodeBench's custom_evaluator JSON as it is
    ([{"question_id", "code_list"}])."""
    format: SampleFormat = Field("auto", title="Format")
    """jsonl or lcb (LiveCodeBench's custom_evaluator JSON); auto: lcb for a JSON list of {question_id, code_list},
    else jsonl."""
    checkpoint: str | None = Field(None, title="Checkpoint", json_schema_extra={"none": "the file's own"})
    """Where a LiveCodeBench file's samples came from (it names no checkpoint): a folder, a hub name or a free
    label; a JSONL line names its own."""
    setting: Setting = Field("reasoning", title="Setting")
    """reasoning: one turn; tool: Python runs in the sandbox between turns; agentic: a sandboxed
    terminal with a submit action (docs/method.md, Inference settings). Reasoning is the paper's main setting."""
    backend: SandboxBackend = Field("bwrap", title="Sandbox")
    """Sandbox the programs (and tool calls) run in: bwrap (default, no daemon), docker, or none (no
    isolation: trusted code only)."""
    time_limit_s: float | None = Field(
        None,
        gt=0,
        le=60,
        title="Time limit override (s)",
        json_schema_extra={"none": "the problem's", "aliases": ["--time-limit"]},
    )
    """CPU seconds per test for every problem instead of each problem's own limit; none: the problem's
    (2 s for tests given as a file)."""
    memory_limit_mb: int | None = Field(
        None,
        ge=MIN_MEMORY_MB,
        le=65536,
        title="Memory override (MB)",
        json_schema_extra={"none": "the problem's", "aliases": ["--memory-limit"]},
    )
    """Memory per test for every problem instead of each problem's own; none: the problem's (256 MB
    for tests given as a file)."""
