import random

TITLE = "Subarrays With Sum K"
DIFFICULTY = "medium"
TAGS = ["prefix sums", "hashing"]
STATEMENT = """
Count the non-empty contiguous subarrays whose sum is exactly K. Values may be negative.
"""
INPUT_SPEC = "Line 1: n and K. Line 2: n integers a_i (-100 <= a_i <= 100)."
OUTPUT_SPEC = "One integer: the number of subarrays."

REFERENCE = """
import sys
from collections import defaultdict

data = sys.stdin.buffer.read().split()
n, k = int(data[0]), int(data[1])
count = defaultdict(int)
count[0] = 1
s = ans = 0
for tok in data[2:2 + n]:
    s += int(tok)
    ans += count[s - k]
    count[s] += 1
print(ans)
"""

BRUTE = """
n, k = map(int, input().split())
a = list(map(int, input().split()))
ans = 0
for i in range(n):
    s = 0
    for j in range(i, n):
        s += a[j]
        if s == k:
            ans += 1
print(ans)
"""

BUGGY = [
    """
n, k = map(int, input().split())
a = list(map(int, input().split()))
ans = lo = s = 0
for hi in range(n):
    s += a[hi]
    while s > k and lo <= hi:
        s -= a[lo]
        lo += 1
    if s == k:
        ans += 1
print(ans)
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(1, target_len // 4)
    a = [rng.randint(-9, 9) for _ in range(n)]
    return f"{n} {rng.randint(-5, 5)}\n{' '.join(map(str, a))}\n"
