import random

TITLE = "Count Inversions"
DIFFICULTY = "medium"
TAGS = ["fenwick tree", "sorting"]
STATEMENT = """
Count the pairs (i, j) with i < j and a_i > a_j.
"""
INPUT_SPEC = "Line 1: n. Line 2: n integers a_i (1 <= a_i <= n)."
OUTPUT_SPEC = "One integer: the number of inversions."

REFERENCE = """
import sys

data = sys.stdin.buffer.read().split()
n = int(data[0])
tree = [0] * (n + 1)
inv = 0
seen = 0
for tok in data[1:1 + n]:
    x = int(tok)
    i, le = x, 0
    while i > 0:
        le += tree[i]
        i -= i & -i
    inv += seen - le
    seen += 1
    i = x
    while i <= n:
        tree[i] += 1
        i += i & -i
print(inv)
"""

BRUTE = """
n = int(input())
a = list(map(int, input().split()))
print(sum(1 for i in range(n) for j in range(i + 1, n) if a[i] > a[j]))
"""

BUGGY = [
    """
n = int(input())
a = list(map(int, input().split()))
tree = [0] * (n + 1)
inv = 0
for k, x in enumerate(a):
    i, lt = x - 1, 0
    while i > 0:
        lt += tree[i]
        i -= i & -i
    inv += k - lt
    i = x
    while i <= n:
        tree[i] += 1
        i += i & -i
print(inv)
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(1, target_len // 7)
    a = [rng.randint(1, max(1, n // 3)) for _ in range(n)]  # many equal values
    return f"{n}\n{' '.join(map(str, a))}\n"
