import random

TITLE = "Range Add, Range Sum"
DIFFICULTY = "hard"
TAGS = ["fenwick tree", "data structures"]
STATEMENT = """
An array of n zeros receives q operations: "1 l r v" adds v to a_l..a_r; "2 l r" asks for the
sum a_l + ... + a_r (1-based, inclusive). Answer every query.
"""
INPUT_SPEC = "Line 1: n q. Then q lines, each an operation (1 <= l <= r <= n, -1000 <= v <= 1000)."
OUTPUT_SPEC = "One line per query of type 2: its sum."

REFERENCE = """
import sys

data = sys.stdin.buffer.read().split()
n, q = int(data[0]), int(data[1])
b1 = [0] * (n + 2)
b2 = [0] * (n + 2)

def add(tree, i, v):
    while i <= n:
        tree[i] += v
        i += i & -i

def pref(i):
    s1 = s2 = 0
    j = i
    while j > 0:
        s1 += b1[j]
        s2 += b2[j]
        j -= j & -j
    return s1 * i - s2

out = []
pos = 2
for _ in range(q):
    if data[pos] == b"1":
        l, r, v = int(data[pos + 1]), int(data[pos + 2]), int(data[pos + 3])
        pos += 4
        add(b1, l, v)
        add(b1, r + 1, -v)
        add(b2, l, v * (l - 1))
        add(b2, r + 1, -v * r)
    else:
        l, r = int(data[pos + 1]), int(data[pos + 2])
        pos += 3
        out.append(pref(r) - pref(l - 1))
print("\\n".join(map(str, out)))
"""

BRUTE = """
n, q = map(int, input().split())
a = [0] * (n + 1)
for _ in range(q):
    op = list(map(int, input().split()))
    if op[0] == 1:
        for i in range(op[1], op[2] + 1):
            a[i] += op[3]
    else:
        print(sum(a[op[1]:op[2] + 1]))
"""

BUGGY = [
    """
n, q = map(int, input().split())
diff = [0] * (n + 2)
for _ in range(q):
    op = list(map(int, input().split()))
    if op[0] == 1:
        diff[op[1]] += op[3]
        diff[op[2]] -= op[3]
    else:
        a, run = [0] * (n + 1), 0
        for i in range(1, n + 1):
            run += diff[i]
            a[i] = run
        print(sum(a[op[1]:op[2] + 1]))
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    q = max(1, target_len // 18)
    n = max(1, q)
    lines = [f"{n} {q}"]
    for _ in range(q):
        l = rng.randint(1, max(1, n // 4))
        r = rng.randint(max(l, 3 * n // 4), n)
        lines.append(f"1 {l} {r} {rng.randint(-1000, 1000)}" if rng.random() < 0.5 else f"2 {l} {r}")
    return "\n".join(lines) + "\n"
