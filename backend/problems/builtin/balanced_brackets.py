import random

TITLE = "Balanced Brackets"
DIFFICULTY = "easy"
TAGS = ["stack", "strings"]
STATEMENT = """
A string of the characters ()[]{} is balanced if every opening bracket is closed by the matching
bracket in the right order. Print YES if the given string is balanced, otherwise NO.
"""
INPUT_SPEC = "One line: the bracket string (length >= 1)."
OUTPUT_SPEC = "YES or NO."

REFERENCE = """
import sys

s = sys.stdin.readline().strip()
pairs = {")": "(", "]": "[", "}": "{"}
stack = []
ok = True
for ch in s:
    if ch in "([{":
        stack.append(ch)
    elif not stack or stack.pop() != pairs[ch]:
        ok = False
        break
print("YES" if ok and not stack else "NO")
"""

BRUTE = """
s = input().strip()
while True:
    t = s.replace("()", "").replace("[]", "").replace("{}", "")
    if t == s:
        break
    s = t
print("YES" if not s else "NO")
"""

BUGGY = [
    """
s = input().strip()
ok = s.count("(") == s.count(")") and s.count("[") == s.count("]") and s.count("{") == s.count("}")
print("YES" if ok else "NO")
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    half = max(1, target_len // 2)
    opens = [rng.choice("([{") for _ in range(half)]
    close = {"(": ")", "[": "]", "{": "}"}
    s = "".join(opens) + "".join(close[c] for c in reversed(opens))  # deep nesting: slow to peel
    if seed % 2:
        i = rng.randrange(len(s) // 2, len(s))  # swap a closing bracket type: counts stay balanced
        s = s[:i] + {")": "]", "]": "}", "}": ")"}[s[i]] + s[i + 1 :]
        j = rng.randrange(0, len(s) // 2)
        s = s[:j] + {"(": "[", "[": "{", "{": "("}[s[j]] + s[j + 1 :]
    return s + "\n"
