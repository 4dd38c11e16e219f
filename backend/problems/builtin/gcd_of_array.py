import random

TITLE = "Greatest Common Divisor"
DIFFICULTY = "easy"
TAGS = ["number theory"]
STATEMENT = """
Print the greatest common divisor of n positive integers.
"""
INPUT_SPEC = "Line 1: n. Line 2: n integers a_i (1 <= a_i <= 10^6)."
OUTPUT_SPEC = "One integer: gcd(a_1, ..., a_n)."

REFERENCE = """
import sys
from math import gcd

data = sys.stdin.buffer.read().split()
g = 0
for tok in data[1:1 + int(data[0])]:
    g = gcd(g, int(tok))
print(g)
"""

BRUTE = """
n = int(input())
a = list(map(int, input().split()))
best = 1
for d in range(1, min(a) + 1):
    if sum(1 for x in a if x % d == 0) == n:
        best = d
print(best)
"""

BUGGY = [
    """
from math import gcd
n = int(input())
a = list(map(int, input().split()))
print(gcd(a[0], a[-1]))
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(1, target_len // 6)
    g = rng.randint(1, 30)
    a = [g * rng.randint(3000, 30000) for _ in range(n)]
    a[n // 2] = g * 3001  # one element that breaks the first/last shortcut
    return f"{n}\n{' '.join(map(str, a))}\n"
