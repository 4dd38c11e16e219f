import random

TITLE = "Distinct Values in Ranges"
DIFFICULTY = "hard"
TAGS = ["fenwick tree", "offline queries"]
STATEMENT = """
Answer q queries on a fixed array: how many distinct values a_l..a_r contains (1-based, inclusive).
"""
INPUT_SPEC = "Line 1: n q. Line 2: n integers a_i (1 <= a_i <= 10^9). Then q lines l r (l <= r)."
OUTPUT_SPEC = "q lines: the number of distinct values in each range."

REFERENCE = """
import sys

data = sys.stdin.buffer.read().split()
n, q = int(data[0]), int(data[1])
a = data[2:2 + n]
queries = sorted(range(q), key=lambda i: int(data[3 + n + 2 * i]))
tree = [0] * (n + 1)

def add(i, v):
    while i <= n:
        tree[i] += v
        i += i & -i

def pref(i):
    s = 0
    while i > 0:
        s += tree[i]
        i -= i & -i
    return s

last = {}
ans = [0] * q
pos = 0
for qi in queries:
    l, r = int(data[2 + n + 2 * qi]), int(data[3 + n + 2 * qi])
    while pos < r:
        x = a[pos]
        if x in last:
            add(last[x], -1)
        last[x] = pos + 1
        add(pos + 1, 1)
        pos += 1
    ans[qi] = pref(r) - pref(l - 1)
print("\\n".join(map(str, ans)))
"""

BRUTE = """
n, q = map(int, input().split())
a = input().split()
for _ in range(q):
    l, r = map(int, input().split())
    print(len(set(a[l - 1:r])))
"""

BUGGY = [
    """
n, q = map(int, input().split())
a = input().split()
for _ in range(q):
    l, r = map(int, input().split())
    print(1 + sum(1 for i in range(l, r) if a[i] != a[i - 1]))
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(1, target_len // 12)
    q = max(1, target_len // 12)
    a = [rng.randint(1, max(2, n // 2)) for _ in range(n)]
    lines = [f"{n} {q}", " ".join(map(str, a))]
    for _ in range(q):
        l = rng.randint(1, max(1, n // 4))
        lines.append(f"{l} {rng.randint(max(l, 3 * n // 4), n)}")
    return "\n".join(lines) + "\n"
