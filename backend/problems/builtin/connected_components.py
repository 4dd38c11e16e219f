import random

TITLE = "Connected Components"
DIFFICULTY = "medium"
TAGS = ["graphs", "union-find"]
STATEMENT = """
An undirected graph has n vertices numbered 1..n and m edges. Print its number of connected
components.
"""
INPUT_SPEC = "Line 1: n and m. Then m lines, each with u and v (1 <= u, v <= n)."
OUTPUT_SPEC = "One integer: the number of components."

REFERENCE = """
import sys

data = sys.stdin.buffer.read().split()
n, m = int(data[0]), int(data[1])
parent = list(range(n + 1))

def find(x):
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x

comps = n
for i in range(m):
    a, b = find(int(data[2 + 2 * i])), find(int(data[3 + 2 * i]))
    if a != b:
        parent[a] = b
        comps -= 1
print(comps)
"""

BRUTE = """
n, m = map(int, input().split())
label = list(range(n + 1))
for _ in range(m):
    u, v = map(int, input().split())
    old, new = label[u], label[v]
    if old != new:
        label = [new if x == old else x for x in label]
print(len(set(label[1:])))
"""

BUGGY = [
    """
n, m = map(int, input().split())
touched = set()
for _ in range(m):
    u, v = map(int, input().split())
    touched.update((u, v))
print(n - len(touched) + (1 if touched else 0))
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    m = max(1, target_len // 12)
    n = max(2, m)
    edges = [(rng.randint(1, n), rng.randint(1, n)) for _ in range(m)]
    return f"{n} {m}\n" + "\n".join(f"{u} {v}" for u, v in edges) + "\n"
