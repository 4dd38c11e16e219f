import random

TITLE = "Maximum Subarray Sum"
DIFFICULTY = "easy"
TAGS = ["dp", "greedy"]
STATEMENT = """
Given n integers, find the largest sum of a non-empty contiguous subarray.
"""
INPUT_SPEC = "Line 1: n. Line 2: n integers a_i (-10^4 <= a_i <= 10^4)."
OUTPUT_SPEC = "One integer: the maximum subarray sum."

REFERENCE = """
import sys

data = sys.stdin.buffer.read().split()
n = int(data[0])
best = cur = int(data[1])
for tok in data[2:1 + n]:
    x = int(tok)
    cur = x if cur < 0 else cur + x
    if cur > best:
        best = cur
print(best)
"""

BRUTE = """
n = int(input())
a = list(map(int, input().split()))
best = a[0]
for i in range(n):
    s = 0
    for j in range(i, n):
        s += a[j]
        best = max(best, s)
print(best)
"""

BUGGY = [
    """
n = int(input())
a = list(map(int, input().split()))
best = cur = 0
for x in a:
    cur = max(0, cur + x)
    best = max(best, cur)
print(best)
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(1, target_len // 6)
    top = -1 if seed % 3 == 0 else 9000  # all negative: the answer is the largest element
    a = [rng.randint(-9999, top) for _ in range(n)]
    return f"{n}\n{' '.join(map(str, a))}\n"
