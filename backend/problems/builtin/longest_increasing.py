import random

TITLE = "Longest Increasing Subsequence"
DIFFICULTY = "medium"
TAGS = ["dp", "binary search"]
STATEMENT = """
Print the length of the longest strictly increasing subsequence of the sequence.
"""
INPUT_SPEC = "Line 1: n. Line 2: n integers a_i (0 <= a_i <= 10^9)."
OUTPUT_SPEC = "One integer: the length."

REFERENCE = """
import sys
from bisect import bisect_left

data = sys.stdin.buffer.read().split()
tails = []
for tok in data[1:1 + int(data[0])]:
    x = int(tok)
    k = bisect_left(tails, x)
    if k == len(tails):
        tails.append(x)
    else:
        tails[k] = x
print(len(tails))
"""

BRUTE = """
n = int(input())
a = list(map(int, input().split()))
best = [1] * n
for i in range(n):
    for j in range(i):
        if a[j] < a[i] and best[j] + 1 > best[i]:
            best[i] = best[j] + 1
print(max(best))
"""

BUGGY = [
    """
from bisect import bisect_right
n = int(input())
tails = []
for x in map(int, input().split()):
    k = bisect_right(tails, x)
    if k == len(tails):
        tails.append(x)
    else:
        tails[k] = x
print(len(tails))
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(1, target_len // 6)
    a = [rng.randint(0, max(2, n // 4)) for _ in range(n)]  # repeats: strictness matters
    return f"{n}\n{' '.join(map(str, a))}\n"
