"""This machine's speed against the one the sandbox tests' CPU limits were written for.

Under QEMU's TCG emulation (the cgroup v2 VM, scripts/v2vm.sh, on a host whose /dev/kvm cannot
run it) code runs about ten times slower, so a program whose *work* is fixed — a memory bomb that
must reach its cap before its time limit, a C++ compile — meets its CPU limit first. A calibration
loop at the start of the session gives the factor, and those tests scale their CPU limits by it.
Verdict rules are never scaled, nor a limit that a CPU-time burn is measured against (a burn
counts CPU seconds, which emulation does not change).
"""

from __future__ import annotations

import functools
import os
import subprocess

from backend.grading.limits import JudgeLimits
from backend.sandbox.boot import SANDBOX_PYTHON

# The best of three runs of LOOP on this project's machines (2 cores, shared: 0.117–0.148 s, under
# `nice` beside other work); the factor is never below 1.
REFERENCE_CPU_S = 0.12
NOISE = 2.0  # a native machine under load reads up to ~1.3: below this the factor is 1 (limits as written)
LOOP = """
import time
best = 9e9
for _ in range(3):
    s = time.process_time(); x = 0
    for i in range(2_000_000):
        x += i * i
    best = min(best, time.process_time() - s)
print(best)
"""


@functools.cache
def factor() -> float:
    """FLAB_SPEED_FACTOR when set; else the loop's CPU time over the reference (1 below NOISE).
    Under TCG on a loaded host the guest's CPU clock also runs while QEMU waits for the host's
    CPU, so the ratio follows the load too: the CPU times the tests read are inflated alike."""
    if os.environ.get("FLAB_SPEED_FACTOR"):
        return float(os.environ["FLAB_SPEED_FACTOR"])
    out = subprocess.run([SANDBOX_PYTHON, "-c", LOOP], capture_output=True, text=True, check=True, timeout=600)
    ratio = float(out.stdout) / REFERENCE_CPU_S
    return ratio if ratio >= NOISE else 1.0


def scaled(limits: JudgeLimits, program: bool = True) -> JudgeLimits:
    """The same limits with CPU time stretched by the factor: the compiler's, and the program's
    unless `program` is False (a program that burns a given CPU time against its limit)."""
    f = factor()
    update = {"compile_time_s": limits.compile_time_s * f}
    if program:
        update["time_limit_s"] = limits.time_limit_s * f
    return limits.model_copy(update=update)
