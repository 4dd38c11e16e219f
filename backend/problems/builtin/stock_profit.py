import random

TITLE = "Best Single Trade"
DIFFICULTY = "easy"
TAGS = ["greedy", "prefix minimum"]
STATEMENT = """
The price of a stock on day i is p_i. You may buy on one day and sell on a strictly later day.
Print the largest profit p_j - p_i with i < j, or 0 if no trade makes money.
"""
INPUT_SPEC = "Line 1: n (n >= 1). Line 2: n integers p_i (1 <= p_i <= 10^6)."
OUTPUT_SPEC = "One integer: the best profit, or 0."

REFERENCE = """
import sys

data = sys.stdin.buffer.read().split()
n = int(data[0])
low = int(data[1])
best = 0
for tok in data[2:1 + n]:
    p = int(tok)
    if p - low > best:
        best = p - low
    if p < low:
        low = p
print(best)
"""

BRUTE = """
n = int(input())
p = list(map(int, input().split()))
best = 0
for i in range(n):
    for j in range(i + 1, n):
        best = max(best, p[j] - p[i])
print(best)
"""

BUGGY = [
    """
n = int(input())
p = list(map(int, input().split()))
print(max(p) - min(p))
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(1, target_len // 7)
    trend = -1 if seed % 2 else 1  # falling prices make max - min wrong
    p = [max(1, min(10**6, 500000 + trend * i * 7 + rng.randint(-3000, 3000))) for i in range(n)]
    return f"{n}\n{' '.join(map(str, p))}\n"
