import random

TITLE = "Convex Hull Area"
DIFFICULTY = "hard"
TAGS = ["geometry", "convex hull"]
STATEMENT = """
Print twice the area of the convex hull of n points (an integer). Print 0 when the hull has no area.
"""
INPUT_SPEC = "Line 1: n. Then n lines x y (-10^6 <= x, y <= 10^6)."
OUTPUT_SPEC = "One integer: twice the hull's area."

REFERENCE = """
import sys

data = list(map(int, sys.stdin.buffer.read().split()))
n = data[0]
pts = sorted(set(zip(data[1:1 + 2 * n:2], data[2:2 + 2 * n:2])))

def cross(o, a, b):
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

def half(points):
    hull = []
    for p in points:
        while len(hull) >= 2 and cross(hull[-2], hull[-1], p) <= 0:
            hull.pop()
        hull.append(p)
    return hull

hull = half(pts)[:-1] + half(pts[::-1])[:-1] if len(pts) > 2 else pts
area = 0
for i in range(len(hull)):
    x1, y1 = hull[i]
    x2, y2 = hull[(i + 1) % len(hull)]
    area += x1 * y2 - x2 * y1
print(abs(area))
"""

BRUTE = """
n = int(input())
pts = sorted(set(tuple(map(int, input().split())) for _ in range(n)))

def cross(o, a, b):
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

hull = []
if len(pts) > 2:  # gift wrapping: O(n h)
    start = pts[0]
    p = start
    while True:
        hull.append(p)
        q = pts[0] if pts[0] != p else pts[1]
        for r in pts:
            c = cross(p, q, r)
            if c < 0 or (c == 0 and abs(r[0] - p[0]) + abs(r[1] - p[1]) > abs(q[0] - p[0]) + abs(q[1] - p[1])):
                q = r
        p = q
        if p == start:
            break
area = 0
for i in range(len(hull)):
    x1, y1 = hull[i]
    x2, y2 = hull[(i + 1) % len(hull)]
    area += x1 * y2 - x2 * y1
print(abs(area))
"""

BUGGY = [
    """
n = int(input())
pts = sorted(set(tuple(map(int, input().split())) for _ in range(n)))
def cross(o, a, b):
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])
hull = []
for p in pts:
    while len(hull) >= 2 and cross(hull[-2], hull[-1], p) <= 0:
        hull.pop()
    hull.append(p)
area = 0
for i in range(len(hull)):
    x1, y1 = hull[i]
    x2, y2 = hull[(i + 1) % len(hull)]
    area += x1 * y2 - x2 * y1
print(abs(area))
""",
]


def gen(target_len: int, seed: int) -> str:
    import math

    rng = random.Random(seed)
    n = max(3, target_len // 16)
    pts = set()
    while len(pts) < n:  # points near a circle: the hull has many vertices
        t = rng.random() * 2 * math.pi
        rad = 10**6 - rng.randint(0, 3)
        pts.add((int(rad * math.cos(t)), int(rad * math.sin(t))))
    pts = list(pts)
    rng.shuffle(pts)
    return f"{n}\n" + "\n".join(f"{x} {y}" for x, y in pts) + "\n"
