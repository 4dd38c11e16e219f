import random

TITLE = "Most Frequent Values"
DIFFICULTY = "medium"
TAGS = ["hashing", "sorting"]
STATEMENT = """
Print the k most frequent values of the array, most frequent first; equal frequencies go in
increasing order of value.
"""
INPUT_SPEC = "Line 1: n and k (k <= number of distinct values). Line 2: n integers a_i (1 <= a_i <= 10^9)."
OUTPUT_SPEC = "One line with k integers."

REFERENCE = """
import sys
from collections import Counter

data = sys.stdin.buffer.read().split()
n, k = int(data[0]), int(data[1])
count = Counter(map(int, data[2:2 + n]))
best = sorted(count.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
print(" ".join(str(v) for v, _ in best))
"""

BRUTE = """
n, k = map(int, input().split())
a = list(map(int, input().split()))
values = []
for x in a:
    if x not in values:
        values.append(x)
freq = [(a.count(v), v) for v in values]
freq.sort(key=lambda fv: (-fv[0], fv[1]))
print(" ".join(str(v) for _, v in freq[:k]))
"""

BUGGY = [
    """
from collections import Counter
n, k = map(int, input().split())
a = list(map(int, input().split()))
print(" ".join(str(v) for v, _ in Counter(a).most_common(k)))
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(2, target_len // 7)
    distinct = max(2, n // 3)
    pool = rng.sample(range(1, 10**6), distinct)
    a = [rng.choice(pool) for _ in range(n)]
    rng.shuffle(a)
    k = max(1, min(len(set(a)), distinct // 2))
    return f"{n} {k}\n{' '.join(map(str, a))}\n"
