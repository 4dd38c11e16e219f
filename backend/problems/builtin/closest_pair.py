import random

TITLE = "Closest Pair of Points"
DIFFICULTY = "hard"
TAGS = ["geometry", "sweep line"]
STATEMENT = """
Print the smallest squared Euclidean distance between two of the n given points (n >= 2).
"""
INPUT_SPEC = "Line 1: n. Then n lines x y (0 <= x, y <= 10^7)."
OUTPUT_SPEC = "One integer: the smallest squared distance."

REFERENCE = """
import sys

data = list(map(int, sys.stdin.buffer.read().split()))
n = data[0]
pts = sorted(zip(data[1:1 + 2 * n:2], data[2:2 + 2 * n:2]))
best = float("inf")
for i in range(n):
    x, y = pts[i]
    for j in range(i + 1, n):
        dx = pts[j][0] - x
        if dx * dx >= best:
            break
        dy = pts[j][1] - y
        d = dx * dx + dy * dy
        if d < best:
            best = d
print(best)
"""

BRUTE = """
n = int(input())
p = [tuple(map(int, input().split())) for _ in range(n)]
print(min((p[i][0] - p[j][0]) ** 2 + (p[i][1] - p[j][1]) ** 2 for i in range(n) for j in range(i + 1, n)))
"""

BUGGY = [
    """
n = int(input())
p = sorted(tuple(map(int, input().split())) for _ in range(n))
print(min((p[i][0] - p[i + 1][0]) ** 2 + (p[i][1] - p[i + 1][1]) ** 2 for i in range(n - 1)))
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(2, target_len // 16)
    pts = [(rng.randint(0, 10**7), rng.randint(0, 10**7)) for _ in range(n)]
    return f"{n}\n" + "\n".join(f"{x} {y}" for x, y in pts) + "\n"
