import random

TITLE = "Manhattan Diameter"
DIFFICULTY = "easy"
TAGS = ["geometry"]
STATEMENT = """
Given n points with integer coordinates, print the largest Manhattan distance |x_i - x_j| + |y_i - y_j|
between two of them.
"""
INPUT_SPEC = "Line 1: n (n >= 1). Then n lines with x_i y_i (-10^6 <= x_i, y_i <= 10^6)."
OUTPUT_SPEC = "One integer: the largest distance (0 for a single point)."

REFERENCE = """
import sys

data = list(map(int, sys.stdin.buffer.read().split()))
n = data[0]
xs, ys = data[1:1 + 2 * n:2], data[2:2 + 2 * n:2]
s = [x + y for x, y in zip(xs, ys)]
d = [x - y for x, y in zip(xs, ys)]
print(max(max(s) - min(s), max(d) - min(d)))
"""

BRUTE = """
n = int(input())
p = [tuple(map(int, input().split())) for _ in range(n)]
print(max(abs(a[0] - b[0]) + abs(a[1] - b[1]) for a in p for b in p))
"""

BUGGY = [
    """
n = int(input())
p = [tuple(map(int, input().split())) for _ in range(n)]
s = [x + y for x, y in p]
print(max(s) - min(s))
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(1, target_len // 12)
    pts = [(rng.randint(-(10**5), 10**5), rng.randint(-(10**5), 10**5)) for _ in range(n)]
    if n >= 2 and seed % 3:  # the far pair lies along x - y, which x + y alone misses
        r = rng.randint(2 * 10**5, 10**6)
        pts[0], pts[-1] = (-r, r - rng.randint(0, 1000)), (r, -r)
    return f"{n}\n" + "\n".join(f"{x} {y}" for x, y in pts) + "\n"
