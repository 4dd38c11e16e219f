import random

TITLE = "Pairs With Given Sum"
DIFFICULTY = "easy"
TAGS = ["hashing", "two pointers"]
STATEMENT = """
Given n integers and a target K, count the pairs of indices (i, j) with i < j and a_i + a_j = K.
"""
INPUT_SPEC = "Line 1: n and K. Line 2: n integers a_i (0 <= a_i <= 1000)."
OUTPUT_SPEC = "One integer: the number of pairs."

REFERENCE = """
import sys
from collections import Counter

data = sys.stdin.buffer.read().split()
n, k = int(data[0]), int(data[1])
seen = Counter()
pairs = 0
for tok in data[2:2 + n]:
    x = int(tok)
    pairs += seen[k - x]
    seen[x] += 1
print(pairs)
"""

BRUTE = """
n, k = map(int, input().split())
a = list(map(int, input().split()))
count = 0
for i in range(n):
    for j in range(i + 1, n):
        if a[i] + a[j] == k:
            count += 1
print(count)
"""

BUGGY = [
    """
from collections import Counter
n, k = map(int, input().split())
a = list(map(int, input().split()))
c = Counter(a)
print(sum(c[x] * c[k - x] for x in c) // 2)
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(2, target_len // 4)
    a = [rng.randint(0, 100) for _ in range(n)]
    return f"{n} {rng.choice([100, 50, 37])}\n{' '.join(map(str, a))}\n"
