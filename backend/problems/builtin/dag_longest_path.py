import random

TITLE = "Longest Path in a DAG"
DIFFICULTY = "medium"
TAGS = ["graphs", "dp", "topological sort"]
STATEMENT = """
A directed acyclic graph has n vertices and m edges. Print the number of edges on its longest path.
"""
INPUT_SPEC = "Line 1: n and m. Then m lines u v: an edge from u to v (1 <= u, v <= n). The graph has no cycle."
OUTPUT_SPEC = "One integer: the length of the longest path (0 if there are no edges)."

REFERENCE = """
import sys
from collections import deque

data = sys.stdin.buffer.read().split()
n, m = int(data[0]), int(data[1])
adj = [[] for _ in range(n + 1)]
indeg = [0] * (n + 1)
for i in range(m):
    u, v = int(data[2 + 2 * i]), int(data[3 + 2 * i])
    adj[u].append(v)
    indeg[v] += 1
dist = [0] * (n + 1)
queue = deque(v for v in range(1, n + 1) if indeg[v] == 0)
while queue:
    u = queue.popleft()
    for v in adj[u]:
        if dist[u] + 1 > dist[v]:
            dist[v] = dist[u] + 1
        indeg[v] -= 1
        if indeg[v] == 0:
            queue.append(v)
print(max(dist))
"""

BRUTE = """
n, m = map(int, input().split())
edges = [tuple(map(int, input().split())) for _ in range(m)]
dist = [0] * (n + 1)
for _ in range(n):  # Bellman-Ford style: n rounds of relaxing every edge
    changed = False
    for u, v in edges:
        if dist[u] + 1 > dist[v]:
            dist[v] = dist[u] + 1
            changed = True
    if not changed:
        break
print(max(dist))
"""

BUGGY = [
    """
n, m = map(int, input().split())
dist = [0] * (n + 1)
for _ in range(m):
    u, v = map(int, input().split())
    dist[v] = max(dist[v], dist[u] + 1)
print(max(dist))
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    m = max(1, target_len // 12)
    n = max(2, m // 2 + 1)
    order = list(range(1, n + 1))
    rng.shuffle(order)  # vertex labels unrelated to the topological order
    edges = [(order[i], order[i + 1]) for i in range(n - 1)]  # one long chain
    while len(edges) < m:
        i = rng.randrange(n - 1)
        edges.append((order[i], order[rng.randrange(i + 1, n)]))
    edges = edges[:m]
    edges.reverse()  # chain edges listed backwards: one relaxation round per edge
    return f"{n} {len(edges)}\n" + "\n".join(f"{u} {v}" for u, v in edges) + "\n"
