import random

TITLE = "Most Non-Overlapping Meetings"
DIFFICULTY = "medium"
TAGS = ["greedy", "sorting"]
STATEMENT = """
Given n meetings [s_i, e_i) (a meeting may start exactly when another ends), print the largest
number of meetings that can be held in one room without overlap.
"""
INPUT_SPEC = "Line 1: n. Then n lines with s_i e_i (0 <= s_i < e_i <= 10^9)."
OUTPUT_SPEC = "One integer: the maximum number of meetings."

REFERENCE = """
import sys

data = list(map(int, sys.stdin.buffer.read().split()))
n = data[0]
meetings = sorted(zip(data[2:2 + 2 * n:2], data[1:1 + 2 * n:2]))
end = -1
count = 0
for e, s in meetings:
    if s >= end:
        count += 1
        end = e
print(count)
"""

BRUTE = """
n = int(input())
m = sorted(tuple(map(int, input().split())) for _ in range(n))
best = [1] * n
for i in range(n):
    for j in range(i):
        if m[j][1] <= m[i][0] and best[j] + 1 > best[i]:
            best[i] = best[j] + 1
print(max(best))
"""

BUGGY = [
    """
n = int(input())
m = sorted(tuple(map(int, input().split())) for _ in range(n))
end, count = -1, 0
for s, e in m:
    if s >= end:
        count += 1
        end = e
print(count)
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(1, target_len // 14)
    span = 10 * n
    out = []
    for _ in range(n):
        s = rng.randint(0, span)
        out.append((s, s + rng.choice([1, 2, 3, 50, 400])))  # long meetings that start early trap "by start"
    return f"{n}\n" + "\n".join(f"{s} {e}" for s, e in out) + "\n"
