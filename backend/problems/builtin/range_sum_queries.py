import random

TITLE = "Range Sum Queries"
DIFFICULTY = "easy"
TAGS = ["prefix sums"]
STATEMENT = """
You are given an array of n integers and q queries. Each query names two positions l and r
(1-based, l <= r). For every query print the sum a_l + a_(l+1) + ... + a_r.
"""
INPUT_SPEC = "Line 1: n and q. Line 2: n integers a_i (-1000 <= a_i <= 1000). Then q lines, each with l and r."
OUTPUT_SPEC = "q lines: the sum for each query, in order."

REFERENCE = """
import sys

def main():
    data = sys.stdin.buffer.read().split()
    n, q = int(data[0]), int(data[1])
    prefix = [0] * (n + 1)
    for i in range(n):
        prefix[i + 1] = prefix[i] + int(data[2 + i])
    out = []
    pos = 2 + n
    for _ in range(q):
        l, r = int(data[pos]), int(data[pos + 1])
        pos += 2
        out.append(prefix[r] - prefix[l - 1])
    print("\\n".join(map(str, out)))

main()
"""

BRUTE = """
n, q = map(int, input().split())
a = list(map(int, input().split()))
for _ in range(q):
    l, r = map(int, input().split())
    print(sum(a[l - 1:r]))
"""

BUGGY = [
    """
n, q = map(int, input().split())
a = list(map(int, input().split()))
prefix = [0]
for x in a:
    prefix.append(prefix[-1] + x)
for _ in range(q):
    l, r = map(int, input().split())
    print(prefix[r] - prefix[l])
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(1, target_len // 9)
    q = max(1, target_len // 18)
    a = [rng.randint(-1000, 1000) for _ in range(n)]
    lines = [f"{n} {q}", " ".join(map(str, a))]
    for _ in range(q):  # long ranges: what makes summing each range slow
        l = rng.randint(1, max(1, n // 4))
        r = rng.randint(min(n, 3 * n // 4 + 1), n)
        lines.append(f"{l} {r}")
    return "\n".join(lines) + "\n"
