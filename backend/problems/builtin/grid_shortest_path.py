import random

TITLE = "Grid Shortest Path"
DIFFICULTY = "medium"
TAGS = ["graphs", "bfs"]
STATEMENT = """
A grid has r rows and c columns of '.' (free) and '#' (wall). Moving up, down, left or right
between free cells costs 1. Print the fewest moves from the top-left cell to the bottom-right cell,
or -1 if it cannot be reached. Both corners are free.
"""
INPUT_SPEC = "Line 1: r and c. Then r lines of c characters."
OUTPUT_SPEC = "One integer: the distance, or -1."

REFERENCE = """
import sys

data = sys.stdin.buffer.read().split()
r, c = int(data[0]), int(data[1])
# One wall column and two wall rows around the grid, so a move never needs a bounds check:
# this keeps the reference at 3x CPU headroom on the largest tier (the bounds-checked BFS had < 2x).
w = c + 1
free = bytearray(w * (r + 2))
for y, row in enumerate(data[2:2 + r], 1):
    free[y * w:y * w + c] = row.translate(bytes.maketrans(b".#", b"\\1\\0"))
start, goal = w, r * w + c - 1
free[start] = 0
frontier, steps, answer = [start], 0, 0 if start == goal else -1
while frontier and answer < 0:  # breadth first, one distance level at a time
    steps += 1
    reached = []
    for v in frontier:
        for u in (v + 1, v - 1, v + w, v - w):
            if free[u]:
                free[u] = 0
                reached.append(u)
    if not free[goal]:
        answer = steps
    frontier = reached
print(answer)
"""

BRUTE = """
r, c = map(int, input().split())
g = [input().strip() for _ in range(r)]
INF = float("inf")
d = [[INF] * c for _ in range(r)]
d[0][0] = 0
changed = True
while changed:  # relax every cell until nothing improves
    changed = False
    for y in range(r):
        for x in range(c):
            if g[y][x] != "." or d[y][x] == INF:
                continue
            for ny, nx in ((y + 1, x), (y - 1, x), (y, x + 1), (y, x - 1)):
                if 0 <= ny < r and 0 <= nx < c and g[ny][nx] == "." and d[y][x] + 1 < d[ny][nx]:
                    d[ny][nx] = d[y][x] + 1
                    changed = True
print(d[-1][-1] if d[-1][-1] < INF else -1)
"""

BUGGY = [
    """
from collections import deque
r, c = map(int, input().split())
g = [input().strip() for _ in range(r)]
dist = {(0, 0): 0}
q = deque([(0, 0)])
while q:
    y, x = q.popleft()
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            ny, nx = y + dy, x + dx
            if 0 <= ny < r and 0 <= nx < c and g[ny][nx] == "." and (ny, nx) not in dist:
                dist[(ny, nx)] = dist[(y, x)] + 1
                q.append((ny, nx))
print(dist.get((r - 1, c - 1), -1))
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    side = max(2, int((target_len * 0.95) ** 0.5) - 1)
    rows = [["." if y % 4 == 0 or rng.random() > 0.2 else "#" for _ in range(side)] for y in range(side)]
    for y in range(side):  # the outer columns stay free, so the serpentine is always connected
        rows[y][0] = rows[y][-1] = "."
    for y in range(1, side - 1, 4):  # serpentine walls: long paths, slow to relax cell by cell
        gap = side - 1 if (y // 4) % 2 == 0 else 0
        for x in range(side):
            rows[y][x] = "." if x == gap else "#"
    if seed % 5 == 0 and side > 3:  # sometimes unreachable
        rows[-2] = ["#"] * side
    return f"{side} {side}\n" + "\n".join("".join(row) for row in rows) + "\n"
