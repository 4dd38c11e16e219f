import random

TITLE = "Subarrays With At Most K Distinct"
DIFFICULTY = "hard"
TAGS = ["two pointers", "hashing"]
STATEMENT = """
Count the non-empty contiguous subarrays that contain at most k distinct values.
"""
INPUT_SPEC = "Line 1: n k. Line 2: n integers a_i (1 <= a_i <= 10^9)."
OUTPUT_SPEC = "One integer: the number of subarrays."

REFERENCE = """
import sys
from collections import defaultdict

data = sys.stdin.buffer.read().split()
n, k = int(data[0]), int(data[1])
a = data[2:2 + n]
count = defaultdict(int)
distinct = lo = total = 0
for hi, x in enumerate(a):
    if count[x] == 0:
        distinct += 1
    count[x] += 1
    while distinct > k:
        y = a[lo]
        count[y] -= 1
        if count[y] == 0:
            distinct -= 1
        lo += 1
    total += hi - lo + 1
print(total)
"""

BRUTE = """
n, k = map(int, input().split())
a = input().split()
total = 0
for i in range(n):
    seen = set()
    for j in range(i, n):
        seen.add(a[j])
        if len(seen) > k:
            break
        total += 1
print(total)
"""

BUGGY = [
    """
from collections import defaultdict
n, k = map(int, input().split())
a = input().split()
count = defaultdict(int)
lo = total = 0
for hi, x in enumerate(a):
    count[x] += 1
    while len(count) > k:
        count[a[lo]] -= 1
        lo += 1
    total += hi - lo + 1
print(total)
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(1, target_len // 3)
    k = max(1, n // 10)
    a = [rng.randint(1, k + 2) for _ in range(n)]  # few values: windows stay long
    return f"{n} {k}\n{' '.join(map(str, a))}\n"
