import random

TITLE = "Minimum Window Containing All"
DIFFICULTY = "hard"
TAGS = ["two pointers", "strings"]
STATEMENT = """
Given a text s and a pattern t (lowercase letters), print the length of the shortest substring of
s that contains every character of t with at least its multiplicity in t, or -1 if none exists.
"""
INPUT_SPEC = "Line 1: s. Line 2: t (both of length >= 1)."
OUTPUT_SPEC = "One integer: the shortest window length, or -1."

REFERENCE = """
import sys
from collections import Counter

s = sys.stdin.readline().strip()
t = sys.stdin.readline().strip()
need = Counter(t)
missing = len(t)
best = -1
lo = 0
for hi, ch in enumerate(s):
    if need[ch] > 0:
        missing -= 1
    need[ch] -= 1
    if missing == 0:
        while need[s[lo]] < 0:
            need[s[lo]] += 1
            lo += 1
        if best < 0 or hi - lo + 1 < best:
            best = hi - lo + 1
        need[s[lo]] += 1
        missing += 1
        lo += 1
print(best)
"""

BRUTE = """
from collections import Counter
s = input().strip()
t = input().strip()
need = Counter(t)
best = -1
for i in range(len(s)):
    have = Counter()
    for j in range(i, len(s)):
        have[s[j]] += 1
        if all(have[c] >= k for c, k in need.items()):
            if best < 0 or j - i + 1 < best:
                best = j - i + 1
            break
print(best)
"""

BUGGY = [
    """
s = input().strip()
t = set(input().strip())
best, lo, have = -1, 0, {}
for hi, ch in enumerate(s):
    have[ch] = have.get(ch, 0) + 1
    while all(have.get(c, 0) > 0 for c in t):
        if best < 0 or hi - lo + 1 < best:
            best = hi - lo + 1
        have[s[lo]] -= 1
        lo += 1
print(best)
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(4, target_len - 6)
    s = [rng.choice("abcdefgh") for _ in range(n)]
    start = rng.randint(min(n * 2 // 3, n - 3), n - 3)  # the pattern's letters appear only near the end, spread out
    for ch in "xyy":
        s[start] = ch
        start = min(n - 1, start + rng.randint(1, max(1, (n - start) // 3)))
    t = "xyy" if seed % 2 else "xy"
    if seed % 5 == 0:
        t = "xyz"  # never complete
    return "".join(s) + f"\n{t}\n"
