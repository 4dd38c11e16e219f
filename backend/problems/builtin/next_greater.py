import random

TITLE = "Next Greater Element"
DIFFICULTY = "medium"
TAGS = ["stack"]
STATEMENT = """
For each element, print the first element to its right that is strictly greater, or -1 if none.
"""
INPUT_SPEC = "Line 1: n. Line 2: n integers a_i (1 <= a_i <= 10^6)."
OUTPUT_SPEC = "One line with n integers."

REFERENCE = """
import sys

data = sys.stdin.buffer.read().split()
n = int(data[0])
a = list(map(int, data[1:1 + n]))
res = [-1] * n
stack = []
for i, x in enumerate(a):
    while stack and a[stack[-1]] < x:
        res[stack.pop()] = x
    stack.append(i)
print(" ".join(map(str, res)))
"""

BRUTE = """
n = int(input())
a = list(map(int, input().split()))
res = []
for i in range(n):
    nxt = -1
    for j in range(i + 1, n):
        if a[j] > a[i]:
            nxt = a[j]
            break
    res.append(nxt)
print(" ".join(map(str, res)))
"""

BUGGY = [
    """
n = int(input())
a = list(map(int, input().split()))
res = [-1] * n
st = []
for i, x in enumerate(a):
    while st and a[st[-1]] <= x:
        res[st.pop()] = x
    st.append(i)
print(" ".join(map(str, res)))
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(1, target_len // 7)
    a = sorted((rng.randint(1, 10**6) for _ in range(n)), reverse=True)  # falling: the brute scans to the end
    for _ in range(max(1, n // 20)):
        i = rng.randrange(n)
        a[i] = a[i - 1] if i else a[i]  # ties: "strictly greater" matters
    return f"{n}\n{' '.join(map(str, a))}\n"
