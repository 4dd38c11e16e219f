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
    "and wait for its output. When you are done, give your final solution in a ```python code block, "
    "with no tool call.",
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
        title=problem.title,
        statement=problem.statement,
        input_spec=problem.input_spec or "see the statement",
        output_spec=problem.output_spec or "see the statement",
        time_limit=f"{problem.time_limit_s:g}",
        memory_limit=problem.memory_limit_mb,
        example_input=example[0].strip(),
        example_output=example[1].strip(),
    )


def conversation(
    problem: Problem, setting: str, example: tuple[str, str] | None = None, system: str | None = None
) -> list[dict]:
    return [
        {"role": "system", "content": system or SYSTEM[setting]},
        {"role": "user", "content": problem_prompt(problem, example)},
    ]


# The plain format, for base checkpoints without a chat template: one text per setting, in the
# order (problem, instructions, answer cue), so the model continues after the cue as a document
# would. Later turns of the tool and agentic settings are appended: the model's own text as it
# wrote it, and what a tool or command printed under OUTPUT_CUE.
PLAIN_TEMPLATE = "{problem}\n\n{instructions}\n\n{cue}"
ANSWER_CUE = {"reasoning": "Solution:\n", "tool": "Solution:\n", "agentic": "Terminal session:\n"}
OUTPUT_CUE = "\n\nOutput:\n{output}\n\n"


def render_plain(messages: list[dict], setting: str) -> str:
    """A conversation built by `conversation()` (and grown by the multi-turn settings) as one plain prompt."""
    system, user, *rest = messages
    text = PLAIN_TEMPLATE.format(problem=user["content"], instructions=system["content"], cue=ANSWER_CUE[setting])
    for m in rest:
        text += m["content"] if m["role"] == "assistant" else OUTPUT_CUE.format(output=m["content"])
    return text


def render(messages: list[dict], setting: str, prompt_format: str) -> list[dict] | str:
    """What an engine is given: the messages (chat: the engine applies the tokenizer's template) or
    one plain string (vLLM's generate, transformers' tokenizer, TRL's standard format)."""
    return render_plain(messages, setting) if prompt_format == "plain" else messages


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


def resolve_prompt_format(requested: str, folders: list[str]) -> str:
    """The one format a job uses for all its checkpoints (chat or plain), decided before it starts:
    auto is chat when every checkpoint has a chat template, plain otherwise; chat on a checkpoint
    without one is refused in one line (vLLM's chat() and TRL's conversational prompts would fail
    inside the job)."""
    from backend.errors import UserError

    missing = [str(f) for f in folders if not has_chat_template(f)]
    if requested == "chat" and missing:
        raise UserError(
            f"checkpoint {missing[0]} has no chat template (chat_template.jinja or tokenizer_config.json); "
            "use --prompt-format plain (or auto) for a base checkpoint, or save a chat template into the folder"
        )
    if requested == "auto":
        return "plain" if missing else "chat"
    return requested
