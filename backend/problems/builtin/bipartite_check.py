import random

TITLE = "Two Teams"
DIFFICULTY = "hard"
TAGS = ["graphs", "bfs", "bipartite"]
STATEMENT = """
n people and m rivalries (pairs who must be on different teams). Print YES if everyone can be put
on one of two teams so that no rivals share a team, otherwise NO. The graph may be disconnected.
"""
INPUT_SPEC = "Line 1: n m. Then m lines u v (1 <= u, v <= n, u != v)."
OUTPUT_SPEC = "YES or NO."

REFERENCE = """
import sys
from collections import deque

data = sys.stdin.buffer.read().split()
n, m = int(data[0]), int(data[1])
adj = [[] for _ in range(n + 1)]
for i in range(m):
    u, v = int(data[2 + 2 * i]), int(data[3 + 2 * i])
    adj[u].append(v)
    adj[v].append(u)
color = [-1] * (n + 1)
ok = True
for s in range(1, n + 1):
    if color[s] >= 0 or not ok:
        continue
    color[s] = 0
    queue = deque([s])
    while queue and ok:
        u = queue.popleft()
        for v in adj[u]:
            if color[v] < 0:
                color[v] = color[u] ^ 1
                queue.append(v)
            elif color[v] == color[u]:
                ok = False
                break
print("YES" if ok else "NO")
"""

BRUTE = """
n, m = map(int, input().split())
edges = [tuple(map(int, input().split())) for _ in range(m)]
color = [-1] * (n + 1)
ok = True
for s in range(1, n + 1):
    if color[s] >= 0:
        continue
    color[s] = 0
    changed = True
    while changed:  # propagate colours by sweeping every edge until nothing changes
        changed = False
        for u, v in edges:
            for a, b in ((u, v), (v, u)):
                if color[a] >= 0 and color[b] < 0:
                    color[b] = color[a] ^ 1
                    changed = True
for u, v in edges:
    if color[u] == color[v]:
        ok = False
print("YES" if ok else "NO")
"""

BUGGY = [
    """
from collections import deque
n, m = map(int, input().split())
adj = [[] for _ in range(n + 1)]
for _ in range(m):
    u, v = map(int, input().split())
    adj[u].append(v)
    adj[v].append(u)
color = [-1] * (n + 1)
color[1] = 0
q, ok = deque([1]), True
while q:
    u = q.popleft()
    for v in adj[u]:
        if color[v] < 0:
            color[v] = color[u] ^ 1
            q.append(v)
        elif color[v] == color[u]:
            ok = False
print("YES" if ok else "NO")
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    m = max(1, target_len // 12)
    n = max(4, m)
    half = n // 2
    # component 1: a long path listed backwards (slow to propagate); an odd cycle elsewhere for NO
    edges = [(i, i + 1) for i in range(half - 1, 0, -1)]
    while len(edges) < m - 3:
        a, b = rng.randint(1, half), rng.randint(1, half)
        if a % 2 != b % 2:
            edges.append((a, b))  # path vertices alternate by parity: keeps it bipartite
    if seed % 2:  # an odd triangle in a component not containing vertex 1
        edges += [(n - 2, n - 1), (n - 1, n), (n, n - 2)]
    return f"{n} {len(edges)}\n" + "\n".join(f"{u} {v}" for u, v in edges) + "\n"
