import random

TITLE = "Smallest Period"
DIFFICULTY = "medium"
TAGS = ["strings", "prefix function"]
STATEMENT = """
Print the smallest p such that the string s is its first p characters repeated |s|/p times
(p divides |s|).
"""
INPUT_SPEC = "One line: the string s of lowercase letters (length >= 1)."
OUTPUT_SPEC = "One integer: the smallest period p."

REFERENCE = """
import sys

s = sys.stdin.readline().strip()
n = len(s)
pi = [0] * n
for i in range(1, n):
    k = pi[i - 1]
    while k and s[i] != s[k]:
        k = pi[k - 1]
    if s[i] == s[k]:
        k += 1
    pi[i] = k
p = n - pi[-1]
print(p if n % p == 0 else n)
"""

BRUTE = """
s = input().strip()
n = len(s)
for p in range(1, n + 1):
    if n % p == 0 and all(s[i] == s[i % p] for i in range(n)):
        print(p)
        break
"""

BUGGY = [
    """
s = input().strip()
n = len(s)
pi = [0] * n
for i in range(1, n):
    k = pi[i - 1]
    while k and s[i] != s[k]:
        k = pi[k - 1]
    if s[i] == s[k]:
        k += 1
    pi[i] = k
print(n - pi[-1])
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(1, target_len - 1)
    kind = seed % 3
    if target_len >= 10**5:  # stress size: a length with many divisors, and the worst case for the brute force
        n = max(m for m in (50400, 100800, 201600, 302400, 403200, 604800, 806400) if m <= n)
        kind = 2
    if kind == 0:  # a true period
        p = max(1, n // rng.choice([2, 3, 4, 5]))
        unit = "".join(rng.choice("ab") for _ in range(p))
        s = (unit * (n // p + 1))[: (n // p) * p]
    elif kind == 1:  # a border without a period: "aab" * k + "aa"
        s = ("aab" * (n // 3 + 1))[: max(1, n - 2)] + "aa"
    else:  # almost periodic: one late mismatch makes every candidate check long
        s = "a" * (n - 1) + "b"
    return s + "\n"
