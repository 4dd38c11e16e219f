import random

TITLE = "Weighted Shortest Path"
DIFFICULTY = "hard"
TAGS = ["graphs", "dijkstra"]
STATEMENT = """
A directed graph has n vertices and m edges with positive weights. Print the length of the
shortest path from vertex 1 to vertex n, or -1 if n cannot be reached.
"""
INPUT_SPEC = "Line 1: n and m. Then m lines u v w (1 <= u, v <= n, 1 <= w <= 1000)."
OUTPUT_SPEC = "One integer: the distance, or -1."

REFERENCE = """
import sys
import heapq

data = sys.stdin.buffer.read().split()
n, m = int(data[0]), int(data[1])
adj = [[] for _ in range(n + 1)]
for i in range(m):
    u, v, w = int(data[2 + 3 * i]), int(data[3 + 3 * i]), int(data[4 + 3 * i])
    adj[u].append((v, w))
INF = float("inf")
dist = [INF] * (n + 1)
dist[1] = 0
heap = [(0, 1)]
while heap:
    d, u = heapq.heappop(heap)
    if d > dist[u]:
        continue
    for v, w in adj[u]:
        if d + w < dist[v]:
            dist[v] = d + w
            heapq.heappush(heap, (d + w, v))
print(dist[n] if dist[n] < INF else -1)
"""

BRUTE = """
n, m = map(int, input().split())
edges = [tuple(map(int, input().split())) for _ in range(m)]
INF = float("inf")
dist = [INF] * (n + 1)
dist[1] = 0
for _ in range(n - 1):
    changed = False
    for u, v, w in edges:
        if dist[u] + w < dist[v]:
            dist[v] = dist[u] + w
            changed = True
    if not changed:
        break
print(dist[n] if dist[n] < INF else -1)
"""

BUGGY = [
    """
from collections import deque
n, m = map(int, input().split())
adj = [[] for _ in range(n + 1)]
for _ in range(m):
    u, v, w = map(int, input().split())
    adj[u].append((v, w))
dist = [None] * (n + 1)
dist[1] = 0
q = deque([1])
while q:
    u = q.popleft()
    for v, w in adj[u]:
        if dist[v] is None:
            dist[v] = dist[u] + w
            q.append(v)
print(dist[n] if dist[n] is not None else -1)
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    m = max(1, target_len // 14)
    n = max(2, m // 3 + 2)
    edges = [(i, i + 1, 1) for i in range(n - 1, 0, -1)]  # cheap chain 1..n, listed from the end
    while len(edges) < m:
        u = rng.randint(1, n)
        edges.append((u, rng.randint(1, n), rng.randint(500, 1000)))
    edges.append((1, n, 10**3))  # a direct but expensive edge: BFS takes it
    rng.shuffle(edges[n - 1 :])
    return f"{n} {len(edges)}\n" + "\n".join(f"{u} {v} {w}" for u, v, w in edges) + "\n"
