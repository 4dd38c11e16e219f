import random

TITLE = "Distinct Values"
DIFFICULTY = "easy"
TAGS = ["sorting"]
STATEMENT = """
Given n integers, print how many distinct values they contain.
"""
INPUT_SPEC = "Line 1: n. Line 2: n integers a_i (1 <= a_i <= 10^9)."
OUTPUT_SPEC = "One integer: the number of distinct values."

REFERENCE = """
import sys

data = sys.stdin.buffer.read().split()
print(len(set(data[1:1 + int(data[0])])))
"""

BRUTE = """
n = int(input())
a = list(map(int, input().split()))
count = 0
for i in range(n):
    if all(a[j] != a[i] for j in range(i)):
        count += 1
print(count)
"""

BUGGY = [
    """
n = int(input())
a = list(map(int, input().split()))
print(1 + sum(1 for i in range(1, n) if a[i] != a[i - 1]))
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(1, target_len // 8)
    pool = [rng.randint(1, 10**6) for _ in range(max(1, n // 2))]
    a = [rng.choice(pool) for _ in range(n)]
    return f"{n}\n{' '.join(map(str, a))}\n"
