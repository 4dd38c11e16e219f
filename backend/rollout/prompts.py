"""Competitive-programming prompts: stdin and functional problems, one system prompt per setting.
Templates are plain format strings, overridable per call."""

from __future__ import annotations

from pathlib import Path

from backend.records import Problem

SYSTEM = {
    "reasoning": "You are an expert competitive programmer. Think briefly, then give your final solution "
    "as one Python 3 program in a ```python code block. It must read from standard input and write to standard output.",
    "tool": "You are an expert competitive programmer with a Python tool. To run code, write\n"
    '<tool_call>{"name": "python", "arguments": {"code": "..."}}</tool_call>\n'
    "and wait for its output. When you are done, give your final solution in a ```python code block, with no tool call.",
    "agentic": "You are an expert competitive programmer working in a Linux terminal (no network). "
    "Run one shell command per turn as <bash>COMMAND</bash>; you will see its output. Write your solution to a file, "
    "test it, and finish with <submit>FILE</submit>.",
}

STDIN_TEMPLATE = """{title}

{statement}

Input: {input_spec}
Output: {output_spec}
Time limit: {time_limit} seconds. Memory limit: {memory_limit} MB.

Example input:
{example_input}
Example output:
{example_output}"""

FUNCTIONAL_TEMPLATE = """{title}

{statement}

Complete this class; your answer is called as Solution().{func_name}(...):
```python
{starter_code}
```"""


def problem_prompt(problem: Problem, example: tuple[str, str] | None = None, template: str | None = None) -> str:
    if problem.kind == "functional":
        return (template or FUNCTIONAL_TEMPLATE).format(
            title=problem.title,
            statement=problem.statement,
            func_name=problem.func_name,
            starter_code=problem.starter_code or "",
        )
    example = example or ("", "")
    return (template or STDIN_TEMPLATE).format(
        title=problem.title, statement=problem.statement, input_spec=problem.input_spec or "see the statement",
        output_spec=problem.output_spec or "see the statement", time_limit=f"{problem.time_limit_s:g}",
        memory_limit=problem.memory_limit_mb, example_input=example[0].strip(), example_output=example[1].strip(),
    )  # fmt: skip


def conversation(
    problem: Problem, setting: str, example: tuple[str, str] | None = None, system: str | None = None
) -> list[dict]:
    return [
        {"role": "system", "content": system or SYSTEM[setting]},
        {"role": "user", "content": problem_prompt(problem, example)},
    ]


def has_chat_template(folder: str | Path) -> bool:
    """Whether the checkpoint's tokenizer carries a chat template (its own file or its config)."""
    import json

    folder = Path(folder)
    if (folder / "chat_template.jinja").is_file() or (folder / "chat_template.json").is_file():
        return True
    try:
        return bool(json.loads((folder / "tokenizer_config.json").read_text()).get("chat_template"))
    except (OSError, ValueError):
        return False


def require_chat_template(folder: str | Path) -> None:
    """Rollouts, vLLM and TRL's GRPO all format prompts with the chat template: refuse a checkpoint
    without one before any job starts, instead of inside it."""
    from backend.errors import UserError

    if not has_chat_template(folder):
        raise UserError(f"checkpoint {folder} has no chat template (chat_template.jinja or tokenizer_config.json); "
                        "set tokenizer.chat_template and save_pretrained it into the folder")  # fmt: skip
