import random

TITLE = "Two Sum Exists"
DIFFICULTY = "easy"
TAGS = ["hashing"]
STATEMENT = """
Given n integers and a target K, print YES if two different positions i != j have a_i + a_j = K,
otherwise NO.
"""
INPUT_SPEC = "Line 1: n and K. Line 2: n integers a_i (0 <= a_i <= 10^9)."
OUTPUT_SPEC = "YES or NO."

REFERENCE = """
import sys

data = sys.stdin.buffer.read().split()
n, k = int(data[0]), int(data[1])
seen = set()
found = False
for tok in data[2:2 + n]:
    x = int(tok)
    if k - x in seen:
        found = True
        break
    seen.add(x)
print("YES" if found else "NO")
"""

BRUTE = """
n, k = map(int, input().split())
a = list(map(int, input().split()))
print("YES" if any(a[i] + a[j] == k for i in range(n) for j in range(i + 1, n)) else "NO")
"""

BUGGY = [
    """
n, k = map(int, input().split())
a = set(map(int, input().split()))
print("YES" if any(k - x in a for x in a) else "NO")
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(1, target_len // 10)
    a = [rng.randint(0, 10**8) * 2 for _ in range(n)]  # all even
    k = 2 * rng.choice(a) if seed % 2 else 2 * 10**8 + 1  # 2x: only the same index would do; odd: nothing
    return f"{n} {k}\n{' '.join(map(str, a))}\n"
