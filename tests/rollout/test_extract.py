import pytest

from backend.rollout.extract import REASONS, extract_code

CASES = [
    ("ok", "Here:\n```python\nprint(1)\n```\n", "stop", "print(1)\n", None),
    ("last block wins", "```python\nprint(1)\n```\nbetter:\n```python\nprint(2)\n```", "stop", "print(2)\n", None),
    ("untagged block", "```\nprint(3)\n```", "stop", "print(3)\n", None),
    ("py alias", "```py\nprint(4)\n```", "stop", "print(4)\n", None),
    ("other language skipped", "```python\nprint(5)\n```\n```bash\nls\n```", "stop", "print(5)\n", None),
    ("no block", "I think the answer is print(1)", "stop", None, REASONS["no_block"]),
    ("cut off mid block", "```python\nprint(1)\n```\nfix:\n```python\nprint(", "length", None, REASONS["unterminated"]),
    ("open block only", "```python\nprint(1)", "stop", None, REASONS["unterminated"]),
    ("empty block", "```python\n```", "stop", None, REASONS["empty"]),
    ("only other languages", "```cpp\nint main(){}\n```", "stop", None, REASONS["other_language"]),
    ("trailing open fence after a block, stopped", "```python\nprint(6)\n```\n```", "stop", "print(6)\n", None),
    ("prompt too long for the engine", "", "prompt_too_long", None, REASONS["prompt_too_long"]),
    ("a server refused the context", "", "context_too_long", None, REASONS["context_too_long"]),
]


@pytest.mark.parametrize("name,text,finish,code,error", CASES, ids=[c[0] for c in CASES])
def test_extraction_table(name, text, finish, code, error):
    got = extract_code(text, "python", finish)
    assert (got.code, got.error) == (code, error)


def test_every_reason_is_covered():
    assert {c[4] for c in CASES if c[4]} == set(REASONS.values())
