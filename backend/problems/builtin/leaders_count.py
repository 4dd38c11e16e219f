import random

TITLE = "Leaders"
DIFFICULTY = "easy"
TAGS = ["suffix maximum"]
STATEMENT = """
An element is a leader if it is strictly greater than every element to its right (the last
element is always a leader). Count the leaders.
"""
INPUT_SPEC = "Line 1: n. Line 2: n integers a_i (1 <= a_i <= 10^6)."
OUTPUT_SPEC = "One integer: the number of leaders."

REFERENCE = """
import sys

data = sys.stdin.buffer.read().split()
n = int(data[0])
best = 0
count = 0
for tok in reversed(data[1:1 + n]):
    x = int(tok)
    if x > best:
        count += 1
        best = x
print(count)
"""

BRUTE = """
n = int(input())
a = list(map(int, input().split()))
print(sum(1 for i in range(n) if all(a[i] > a[j] for j in range(i + 1, n))))
"""

BUGGY = [
    """
n = int(input())
a = list(map(int, input().split()))
best, count = 0, 0
for x in reversed(a):
    if x >= best:
        count += 1
        best = x
print(count)
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(1, target_len // 8)
    a = sorted(rng.sample(range(1, 10**6), n), reverse=True)  # every element a leader: slow to check
    for _ in range(max(1, n // 50)):  # a few ties, which are not leaders
        k = rng.randrange(n)
        a[k] = a[min(n - 1, k + 1)]
    if seed % 2 and n < 1000:  # small inputs may be unordered too
        rng.shuffle(a)
    return f"{n}\n{' '.join(map(str, a))}\n"
