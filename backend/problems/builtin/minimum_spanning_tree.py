import random

TITLE = "Minimum Spanning Tree"
DIFFICULTY = "hard"
TAGS = ["graphs", "union-find", "greedy"]
STATEMENT = """
A connected undirected graph has n vertices and m weighted edges. Print the total weight of a
minimum spanning tree.
"""
INPUT_SPEC = "Line 1: n m. Then m lines u v w (1 <= u, v <= n, 1 <= w <= 10^6). The graph is connected."
OUTPUT_SPEC = "One integer: the weight of a minimum spanning tree."

REFERENCE = """
import sys

data = sys.stdin.buffer.read().split()
n, m = int(data[0]), int(data[1])
edges = sorted((int(data[4 + 3 * i]), int(data[2 + 3 * i]), int(data[3 + 3 * i])) for i in range(m))
parent = list(range(n + 1))

def find(x):
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x

total = 0
for w, u, v in edges:
    a, b = find(u), find(v)
    if a != b:
        parent[a] = b
        total += w
print(total)
"""

BRUTE = """
n, m = map(int, input().split())
INF = float("inf")
best = {}
for _ in range(m):
    u, v, w = map(int, input().split())
    if u != v:
        best[(u, v)] = min(best.get((u, v), INF), w)
        best[(v, u)] = min(best.get((v, u), INF), w)
adj = [[] for _ in range(n + 1)]
for (u, v), w in best.items():
    adj[u].append((v, w))
key = [INF] * (n + 1)
done = [False] * (n + 1)
key[1] = 0
total = 0
for _ in range(n):  # Prim with a linear scan for the next vertex: O(n^2)
    u = min((k, v) for v, k in enumerate(key) if v and not done[v])[1]
    done[u] = True
    total += key[u]
    for v, w in adj[u]:
        if not done[v] and w < key[v]:
            key[v] = w
print(total)
"""

BUGGY = [
    """
n, m = map(int, input().split())
edges = sorted((w, u, v) for u, v, w in (map(int, input().split()) for _ in range(m)))
seen = {edges[0][1]}
total = 0
for w, u, v in edges:
    if u not in seen or v not in seen:
        seen.update((u, v))
        total += w
print(total)
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    m = max(1, target_len // 16)
    n = max(2, m // 2)
    edges = [(i, rng.randint(1, i - 1), rng.randint(1, 10**6)) for i in range(2, n + 1)]  # a spanning tree
    while len(edges) < m:
        edges.append((rng.randint(1, n), rng.randint(1, n), rng.randint(1, 10**6)))
    rng.shuffle(edges)
    return f"{n} {len(edges)}\n" + "\n".join(f"{u} {v} {w}" for u, v, w in edges) + "\n"
