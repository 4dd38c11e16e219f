import random

TITLE = "Maximum Pair Product"
DIFFICULTY = "easy"
TAGS = ["sorting", "math"]
STATEMENT = """
Given n >= 2 integers (possibly negative), print the largest product a_i * a_j over pairs i < j.
"""
INPUT_SPEC = "Line 1: n. Line 2: n integers a_i (-10^5 <= a_i <= 10^5)."
OUTPUT_SPEC = "One integer: the maximum product."

REFERENCE = """
import sys

data = sys.stdin.buffer.read().split()
a = sorted(map(int, data[1:1 + int(data[0])]))
print(max(a[0] * a[1], a[-1] * a[-2]))
"""

BRUTE = """
n = int(input())
a = list(map(int, input().split()))
print(max(a[i] * a[j] for i in range(n) for j in range(i + 1, n)))
"""

BUGGY = [
    """
n = int(input())
a = sorted(map(int, input().split()))
print(a[-1] * a[-2])
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(2, target_len // 8)
    a = [rng.randint(-(10**5), 5 * 10**4) for _ in range(n)]  # big negatives: their product wins
    return f"{n}\n{' '.join(map(str, a))}\n"
