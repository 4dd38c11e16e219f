import random

TITLE = "Majority Element"
DIFFICULTY = "easy"
TAGS = ["counting", "boyer-moore"]
STATEMENT = """
Given n integers, print the value that occurs more than n/2 times, or -1 if there is none.
"""
INPUT_SPEC = "Line 1: n. Line 2: n integers a_i (1 <= a_i <= 10^9)."
OUTPUT_SPEC = "The majority value, or -1."

REFERENCE = """
import sys

data = sys.stdin.buffer.read().split()
n = int(data[0])
a = data[1:1 + n]
cand, votes = None, 0
for x in a:
    if votes == 0:
        cand = x
    votes += 1 if x == cand else -1
print(int(cand) if a.count(cand) * 2 > n else -1)
"""

BRUTE = """
n = int(input())
a = list(map(int, input().split()))
ans = -1
for x in a:
    if sum(1 for y in a if y == x) * 2 > n:
        ans = x
        break
print(ans)
"""

BUGGY = [
    """
from collections import Counter
n = int(input())
a = list(map(int, input().split()))
print(Counter(a).most_common(1)[0][0])
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(1, target_len // 8)
    if seed % 2:  # a majority, placed late so scanning from the front is slow
        major = rng.randint(1, 10**6)
        a = [rng.randint(1, 10**6) for _ in range(n // 2 - 1)] + [major] * (n - n // 2 + 1)
        a = a[:n]
    else:  # a frequent value that is not a majority
        a = [rng.choice([7, 7, 7, 11, 13, 17]) for _ in range(n)]
    return f"{n}\n{' '.join(map(str, a))}\n"
