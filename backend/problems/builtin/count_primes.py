import random

TITLE = "Primes in a List"
DIFFICULTY = "medium"
TAGS = ["number theory", "sieve"]
STATEMENT = """
Given n integers, print how many of them are prime.
"""
INPUT_SPEC = "Line 1: n. Line 2: n integers a_i (1 <= a_i <= 10^6)."
OUTPUT_SPEC = "One integer: the count of primes."

REFERENCE = """
import sys

data = sys.stdin.buffer.read().split()
a = list(map(int, data[1:1 + int(data[0])]))
top = max(a) + 1
sieve = bytearray([1]) * top
sieve[0] = 0
if top > 1:
    sieve[1] = 0
for p in range(2, int(top ** 0.5) + 1):
    if sieve[p]:
        sieve[p * p::p] = bytearray(len(range(p * p, top, p)))
print(sum(sieve[x] for x in a))
"""

BRUTE = """
n = int(input())
a = list(map(int, input().split()))

def is_prime(x):
    if x < 2:
        return False
    return all(x % d for d in range(2, x))

print(sum(1 for x in a if is_prime(x)))
"""

BUGGY = [
    """
n = int(input())
a = list(map(int, input().split()))
print(sum(1 for x in a if all(x % d for d in range(2, int(x ** 0.5) + 1))))
""",
]


def gen(target_len: int, seed: int) -> str:
    rng = random.Random(seed)
    n = max(1, target_len // 7)
    hi = 200 if target_len < 2000 else 10**6  # small values keep the brute force honest on small tiers
    a = [rng.randint(1, hi) for _ in range(n)]
    a[0] = 1  # 1 is not prime
    return f"{n}\n{' '.join(map(str, a))}\n"
