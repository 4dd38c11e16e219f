import random

TITLE = "Minimum Jumps"
DIFFICULTY = "hard"
TAGS = ["greedy", "bfs", "dp"]
STATEMENT = """
You stand on cell 1 of n cells; from cell i you may jump to any cell i+1..i+a_i. Print the fewest
jumps needed to reach cell n, or -1 if it cannot be reached.
"""
INPUT_SPEC = "Line 1: n. Line 2: n integers a_i (0 <= a_i <= n)."
OUTPUT_SPEC = "One integer: the fewest jumps, or -1."

REFERENCE = """
import sys

data = sys.stdin.buffer.read().split()
n = int(data[0])
a = list(map(int, data[1:1 + n]))
jumps = 0
end = far = 0
ans = 0 if n == 1 else -1
for i in range(n - 1):
    if i > far:
        break
    far = max(far, i + a[i])
    if i == end:
        jumps += 1
        end = far
        if end >= n - 1:
            ans = jumps
            break
print(ans)
"""

BRUTE = """
n = int(input())
a = list(map(int, input().split()))
INF = float("inf")
best = [INF] * n
best[0] = 0
for i in range(n):
    if best[i] == INF:
        continue
    for j in range(i + 1, min(n, i + a[i] + 1)):
        if best[i] + 1 < best[j]:
            best[j] = best[i] + 1
print(best[-1] if best[-1] < INF else -1)
"""

BUGGY = [
    """
n = int(input())
a = list(map(int, input().split()))
i = jumps = 0
while i < n - 1 and a[i] > 0:
    i += a[i]
    jumps += 1
print(jumps if i >= n - 1 else -1)
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(1, target_len // 6)
    a = [rng.randint(n // 4, n // 2) if n > 8 else rng.randint(0, 3) for _ in range(n)]  # long jumps: O(n^2) to relax
    for i in range(1, n, 7):
        a[i] = rng.randint(0, 2)  # short landing spots trap the always-jump-max greedy
    if seed % 4 == 0 and n > 4:
        for i in range(n // 2 - 1, n // 2 + 1):
            a[i] = 0
        for i in range(n // 2 - 1):
            a[i] = min(a[i], n // 2 - 1 - i)  # nothing jumps over the gap: unreachable
    return f"{n}\n{' '.join(map(str, a))}\n"
