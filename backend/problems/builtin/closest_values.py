import random

TITLE = "Closest Values"
DIFFICULTY = "easy"
TAGS = ["sorting"]
STATEMENT = """
Given n >= 2 integers, print the smallest absolute difference |a_i - a_j| over pairs i != j.
"""
INPUT_SPEC = "Line 1: n. Line 2: n integers a_i (0 <= a_i <= 10^9)."
OUTPUT_SPEC = "One integer: the minimum difference."

REFERENCE = """
import sys

data = sys.stdin.buffer.read().split()
a = sorted(map(int, data[1:1 + int(data[0])]))
print(min(b - a for a, b in zip(a, a[1:])))
"""

BRUTE = """
n = int(input())
a = list(map(int, input().split()))
print(min(abs(a[i] - a[j]) for i in range(n) for j in range(i + 1, n)))
"""

BUGGY = [
    """
n = int(input())
a = list(map(int, input().split()))
print(min(abs(a[i] - a[i + 1]) for i in range(n - 1)))
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(2, target_len // 10)
    a = rng.sample(range(0, 10**9, 1000), n)
    i, j = rng.sample(range(n), 2)
    a[j] = a[i] + rng.randint(1, 999)  # the closest pair, usually not adjacent in input order
    return f"{n}\n{' '.join(map(str, a))}\n"
