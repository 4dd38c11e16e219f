"""Code extraction: the last fenced code block in the answer's language, or a format failure
with its reason."""

from __future__ import annotations

import re
from dataclasses import dataclass

LANG_ALIASES = {"python": {"python", "py", "python3"}, "cpp": {"cpp", "c++", "cc", "cxx"}}
FENCE = re.compile(r"^[ \t]*```[ \t]*([\w+#.-]*)[ \t]*$", re.MULTILINE)


@dataclass
class Extraction:
    code: str | None
    error: str | None  # None when code was found

    @property
    def ok(self) -> bool:
        return self.code is not None


REASONS = {
    "no_block": "no fenced code block in the answer",
    "unterminated": "the answer was cut off inside a code block",
    "empty": "the last code block is empty",
    "other_language": "code blocks exist, but none in the expected language",
    "prompt_too_long": "the prompt is longer than the engine's max_model_len, so nothing was generated",
    "context_too_long": "the server refused the request: the prompt and max_tokens exceed its context length",
}


def extract_code(text: str, language: str = "python", finish_reason: str = "stop") -> Extraction:
    """Blocks are ```lang ... ``` pairs; an untagged block counts as the expected language.
    A block left open at the end is a format failure (a truncated program must not be judged)."""
    if finish_reason in ("prompt_too_long", "context_too_long"):
        return Extraction(None, REASONS[finish_reason])
    fences = list(FENCE.finditer(text))
    blocks, open_tag, open_end = [], None, None
    for m in fences:
        if open_end is None:
            open_tag, open_end = m.group(1).lower(), m.end()
        elif m.group(1) == "":
            blocks.append((open_tag, text[open_end : m.start()].strip("\n")))
            open_end = None
        else:  # a new opening fence while one is open: treat the previous as unterminated
            open_tag, open_end = m.group(1).lower(), m.end()
    if open_end is not None and (finish_reason == "length" or not blocks):
        return Extraction(None, REASONS["unterminated"])
    if not blocks:
        return Extraction(None, REASONS["no_block"])
    wanted = LANG_ALIASES.get(language, {language})
    matching = [code for tag, code in blocks if tag in wanted or tag == ""]
    if not matching:
        return Extraction(None, REASONS["other_language"])
    if not matching[-1].strip():
        return Extraction(None, REASONS["empty"])
    return Extraction(matching[-1] + "\n", None)
