import random

TITLE = "Matrix Region Sums"
DIFFICULTY = "medium"
TAGS = ["prefix sums", "2d"]
STATEMENT = """
Given an r x c matrix and q queries (y1, x1, y2, x2) with 1-based inclusive corners, print the
sum of each rectangle.
"""
INPUT_SPEC = "Line 1: r c q. Then r lines of c integers (0..9). Then q lines: y1 x1 y2 x2 (y1 <= y2, x1 <= x2)."
OUTPUT_SPEC = "q lines: the rectangle sums."

REFERENCE = """
import sys

data = sys.stdin.buffer.read().split()
r, c, q = int(data[0]), int(data[1]), int(data[2])
P = [[0] * (c + 1) for _ in range(r + 1)]
pos = 3
for y in range(1, r + 1):
    row, prev, run = P[y], P[y - 1], 0
    for x in range(1, c + 1):
        run += int(data[pos])
        pos += 1
        row[x] = prev[x] + run
out = []
for _ in range(q):
    y1, x1, y2, x2 = (int(t) for t in data[pos:pos + 4])
    pos += 4
    out.append(P[y2][x2] - P[y1 - 1][x2] - P[y2][x1 - 1] + P[y1 - 1][x1 - 1])
print("\\n".join(map(str, out)))
"""

BRUTE = """
r, c, q = map(int, input().split())
m = [list(map(int, input().split())) for _ in range(r)]
for _ in range(q):
    y1, x1, y2, x2 = map(int, input().split())
    print(sum(m[y][x] for y in range(y1 - 1, y2) for x in range(x1 - 1, x2)))
"""

BUGGY = [
    """
r, c, q = map(int, input().split())
m = [list(map(int, input().split())) for _ in range(r)]
P = [[0] * (c + 1) for _ in range(r + 1)]
for y in range(r):
    for x in range(c):
        P[y + 1][x + 1] = m[y][x] + P[y][x + 1] + P[y + 1][x] - P[y][x]
for _ in range(q):
    y1, x1, y2, x2 = map(int, input().split())
    print(P[y2][x2] - P[y1][x2] - P[y2][x1] + P[y1][x1])
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    side = max(1, int((target_len / 4) ** 0.5))
    q = max(1, target_len // 30)
    lines = [f"{side} {side} {q}"]
    lines += [" ".join(str(rng.randint(0, 9)) for _ in range(side)) for _ in range(side)]
    for _ in range(q):
        y1, x1 = rng.randint(1, max(1, side // 4)), rng.randint(1, max(1, side // 4))
        lines.append(
            f"{y1} {x1} {rng.randint(max(y1, 3 * side // 4), side)} {rng.randint(max(x1, 3 * side // 4), side)}"
        )
    return "\n".join(lines) + "\n"
