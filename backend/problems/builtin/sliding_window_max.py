import random

TITLE = "Sliding Window Maximum"
DIFFICULTY = "medium"
TAGS = ["deque", "data structures"]
STATEMENT = """
For an array of n integers and a window length k, print the maximum of every window of k
consecutive elements, from left to right (n - k + 1 numbers).
"""
INPUT_SPEC = "Line 1: n and k (1 <= k <= n). Line 2: n integers a_i (0 <= a_i <= 10^9)."
OUTPUT_SPEC = "One line with n - k + 1 integers."

REFERENCE = """
import sys
from collections import deque

data = sys.stdin.buffer.read().split()
n, k = int(data[0]), int(data[1])
a = list(map(int, data[2:2 + n]))
dq = deque()
out = []
for i, x in enumerate(a):
    while dq and a[dq[-1]] <= x:
        dq.pop()
    dq.append(i)
    if dq[0] <= i - k:
        dq.popleft()
    if i >= k - 1:
        out.append(a[dq[0]])
print(" ".join(map(str, out)))
"""

BRUTE = """
n, k = map(int, input().split())
a = list(map(int, input().split()))
res = []
for i in range(n - k + 1):
    best = a[i]
    for j in range(i, i + k):
        if a[j] > best:
            best = a[j]
    res.append(best)
print(" ".join(map(str, res)))
"""

BUGGY = [
    """
n, k = map(int, input().split())
a = list(map(int, input().split()))
print(" ".join(str(max(a[i:i + k - 1] or a[i:i + 1])) for i in range(n - k + 1)))
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(1, target_len // 8)
    k = max(1, n // 2)
    a = [rng.randint(0, 10**6) for _ in range(n)]
    return f"{n} {k}\n{' '.join(map(str, a))}\n"
