import random

TITLE = "Range Minimum Queries"
DIFFICULTY = "hard"
TAGS = ["sparse table", "data structures"]
STATEMENT = """
Answer q queries on a fixed array: the minimum of a_l..a_r (1-based, inclusive).
"""
INPUT_SPEC = "Line 1: n q. Line 2: n integers a_i (0 <= a_i <= 10^9). Then q lines l r (l <= r)."
OUTPUT_SPEC = "q lines: the minimum for each query."

REFERENCE = """
import sys

data = sys.stdin.buffer.read().split()
n, q = int(data[0]), int(data[1])
table = [list(map(int, data[2:2 + n]))]
j = 1
while 2 * j <= n:
    prev = table[-1]
    table.append([min(prev[i], prev[i + j]) for i in range(n - 2 * j + 1)])
    j *= 2
out = []
pos = 2 + n
for _ in range(q):
    l, r = int(data[pos]) - 1, int(data[pos + 1])
    pos += 2
    k = (r - l).bit_length() - 1
    row = table[k]
    out.append(min(row[l], row[r - (1 << k)]))
print("\\n".join(map(str, out)))
"""

BRUTE = """
n, q = map(int, input().split())
a = list(map(int, input().split()))
for _ in range(q):
    l, r = map(int, input().split())
    best = a[l - 1]
    for i in range(l - 1, r):
        if a[i] < best:
            best = a[i]
    print(best)
"""

BUGGY = [
    """
n, q = map(int, input().split())
a = list(map(int, input().split()))
table = [a]
j = 1
while 2 * j <= n:
    prev = table[-1]
    table.append([min(prev[i], prev[i + j]) for i in range(n - 2 * j + 1)])
    j *= 2
for _ in range(q):
    l, r = map(int, input().split())
    k = (r - l).bit_length() - 1
    print(min(table[k][l - 1], table[k][r - (1 << k) - 1]))
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(1, target_len // 14)
    q = max(1, target_len // 14)
    a = [rng.randint(0, 10**6) for _ in range(n)]
    lines = [f"{n} {q}", " ".join(map(str, a))]
    for _ in range(q):
        l = rng.randint(1, max(1, n // 4))
        lines.append(f"{l} {rng.randint(max(l, 3 * n // 4), n)}")
    return "\n".join(lines) + "\n"
