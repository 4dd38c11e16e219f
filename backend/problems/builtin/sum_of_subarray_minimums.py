import random

TITLE = "Sum of Subarray Minimums"
DIFFICULTY = "hard"
TAGS = ["stack", "combinatorics"]
STATEMENT = """
Print the sum of min(a_l..a_r) over all non-empty contiguous subarrays, modulo 10^9 + 7.
"""
INPUT_SPEC = "Line 1: n. Line 2: n integers a_i (1 <= a_i <= 10^6)."
OUTPUT_SPEC = "One integer: the sum modulo 1000000007."

REFERENCE = """
import sys

data = sys.stdin.buffer.read().split()
n = int(data[0])
a = list(map(int, data[1:1 + n]))
left = [0] * n
right = [0] * n
stack = []
for i in range(n):  # previous strictly smaller
    while stack and a[stack[-1]] >= a[i]:
        stack.pop()
    left[i] = i - (stack[-1] if stack else -1)
    stack.append(i)
stack = []
for i in range(n - 1, -1, -1):  # next smaller or equal
    while stack and a[stack[-1]] > a[i]:
        stack.pop()
    right[i] = (stack[-1] if stack else n) - i
    stack.append(i)
print(sum(a[i] * left[i] * right[i] for i in range(n)) % (10**9 + 7))
"""

BRUTE = """
n = int(input())
a = list(map(int, input().split()))
total = 0
for i in range(n):
    low = a[i]
    for j in range(i, n):
        if a[j] < low:
            low = a[j]
        total += low
print(total % (10**9 + 7))
"""

BUGGY = [
    """
n = int(input())
a = list(map(int, input().split()))
left, right, st = [0] * n, [0] * n, []
for i in range(n):
    while st and a[st[-1]] >= a[i]:
        st.pop()
    left[i] = i - (st[-1] if st else -1)
    st.append(i)
st = []
for i in range(n - 1, -1, -1):
    while st and a[st[-1]] >= a[i]:
        st.pop()
    right[i] = (st[-1] if st else n) - i
    st.append(i)
print(sum(a[i] * left[i] * right[i] for i in range(n)) % (10**9 + 7))
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(1, target_len // 3)
    a = [rng.randint(1, 9) for _ in range(n)]  # many equal values: double counting shows
    return f"{n}\n{' '.join(map(str, a))}\n"
