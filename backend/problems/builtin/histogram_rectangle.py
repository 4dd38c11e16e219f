import random

TITLE = "Largest Rectangle in a Histogram"
DIFFICULTY = "hard"
TAGS = ["stack"]
STATEMENT = """
A histogram has n bars of width 1 and heights h_i. Print the area of the largest axis-aligned
rectangle inside it.
"""
INPUT_SPEC = "Line 1: n. Line 2: n integers h_i (0 <= h_i <= 10^6)."
OUTPUT_SPEC = "One integer: the largest area."

REFERENCE = """
import sys

data = sys.stdin.buffer.read().split()
h = list(map(int, data[1:1 + int(data[0])])) + [0]
stack = []
best = 0
for i, x in enumerate(h):
    start = i
    while stack and stack[-1][1] >= x:
        start, height = stack.pop()
        best = max(best, height * (i - start))
    stack.append((start, x))
print(best)
"""

BRUTE = """
n = int(input())
h = list(map(int, input().split()))
best = 0
for i in range(n):
    low = h[i]
    for j in range(i, n):
        low = min(low, h[j])
        best = max(best, low * (j - i + 1))
print(best)
"""

BUGGY = [
    """
n = int(input())
h = list(map(int, input().split()))
st, best = [], 0
for i, x in enumerate(h):
    start = i
    while st and st[-1][1] >= x:
        start, height = st.pop()
        best = max(best, height * (i - start))
    st.append((start, x))
print(best)
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(1, target_len // 7)
    h = sorted(rng.randint(1, 10**6) for _ in range(n))  # rising: the best rectangle is left on the stack
    if seed % 3 == 0:
        h = [rng.randint(0, 10**6) for _ in range(n)]
    return f"{n}\n{' '.join(map(str, h))}\n"
