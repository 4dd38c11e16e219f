import random

TITLE = "Longest Run"
DIFFICULTY = "easy"
TAGS = ["strings"]
STATEMENT = """
Given a string of lowercase letters, print the length of its longest block of equal consecutive
characters.
"""
INPUT_SPEC = "One line: the string s (length >= 1)."
OUTPUT_SPEC = "One integer: the longest run length."

REFERENCE = """
import sys

s = sys.stdin.readline().strip()
best = cur = 1
for i in range(1, len(s)):
    cur = cur + 1 if s[i] == s[i - 1] else 1
    if cur > best:
        best = cur
print(best)
"""

BRUTE = """
s = input().strip()
best = 0
for i in range(len(s)):
    for j in range(i + 1, len(s) + 1):
        if s[i:j] == s[i] * (j - i):
            best = max(best, j - i)
print(best)
"""

BUGGY = [
    """
s = input().strip()
best = cur = 1
for i in range(1, len(s)):
    if s[i] == s[i - 1]:
        cur += 1
    else:
        best = max(best, cur)
        cur = 1
print(best)
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(1, target_len - 1)
    parts, total = [], 0
    while total < n:
        parts.append(rng.choice("ab") * rng.randint(1, 6))
        total += len(parts[-1])
    s = "".join(parts)[:n]
    tail = max(1, n // 3)  # the longest run at the very end
    s = s[: n - tail] + ("c" * tail if s[n - tail - 1 : n - tail] != "c" else "d" * tail)
    return s + "\n"
