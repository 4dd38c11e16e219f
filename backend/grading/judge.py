"""The judge: one program against a problem's tests, in ascending input length, in a sandbox.

`judge()` is a plain function of (program, tests, limits, ...) so it runs anywhere: in this
process, in a worker pool (pool.py) or in a Ray task. It returns the judged sample's one record,
a `Judgement` (backend/records.py), which the store keeps as it is.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass, replace

from backend.errors import UserError
from backend.grading import checkers, lcb, special
from backend.grading.limits import JudgeLimits
from backend.outcomes import Verdict, stored_outcome
from backend.records import Judgement, Problem, TestResult, highest_tier_passed, rewards, tier_of, zero_rewards
from backend.sandbox.backends import SandboxError, Session, open_session
from backend.sandbox.result import RunResult

LANGUAGES = ("python", "cpp")


SE_RETRIES = 2


@dataclass
class Program:
    source: str
    language: str = "python"

    def __post_init__(self):
        if self.language not in LANGUAGES:
            raise UserError(f"unsupported language {self.language!r}; use python or cpp")


@dataclass
class JudgeTest:
    __test__ = False  # not a pytest class

    input: str
    output: str

    @property
    def input_len(self) -> int:
        return len(self.input)


@dataclass
class SpecialJudge:
    """A testlib-style checker: `checker input output answer`, exit 0 = accepted."""

    source: str
    language: str = "cpp"


@dataclass
class FailureContext:
    """What a repair policy is shown about a sample's first failure (rl/ truncates it further)."""

    verdict: Verdict
    tier: int
    input_len: int
    cpu_s: float | None = None  # None (and the limits): nothing ran, a compile error
    time_limit_s: float | None = None
    mem_mb: float | None = None
    memory_limit_mb: int | None = None
    diff: str = ""  # WA: the first differing line
    stderr: str = ""  # RE and CE: the end of stderr


def failure_context(judged: Judgement, limits: JudgeLimits) -> FailureContext | None:
    """A judged sample's first failure as a repair policy is shown it, under the limits it was
    judged with: its verdict and tier, CPU and memory against the limits, and its test's detail (a
    wrong answer's first differing line or a special checker's message, a crash's stderr, a
    compiler's message). None where no program ran: a format failure, or the sandbox failed."""
    failed = judged.first_failure
    if failed is None or judged.verdict in (Verdict.FORMAT, Verdict.SE):
        return None
    if failed.verdict == Verdict.CE:
        return FailureContext(Verdict.CE, tier=1, input_len=0, stderr=failed.detail[-300:])
    return FailureContext(
        verdict=failed.verdict,
        tier=failed.tier,
        input_len=failed.input_len,
        cpu_s=round(failed.cpu_s, 3),
        time_limit_s=limits.time_limit_s,
        mem_mb=round(failed.mem_mb, 1),
        memory_limit_mb=limits.memory_mb,
        diff=failed.detail if failed.verdict == Verdict.WA else "",
        stderr=failed.detail[-300:] if failed.verdict == Verdict.RE else "",
    )


DETAIL_KEPT = 300  # characters of a passing or later test's detail a judgement keeps; the first failure's is whole


@dataclass
class JudgeSetup:
    """How a stored problem is judged: its limits, its checker and, for functional problems, the
    method to call. Built in one place for the CLI, sweep jobs and RL rewards alike."""

    limits: JudgeLimits
    checker: str | SpecialJudge
    func_name: str | None


def judge_setup(problem: Problem, time_limit_s: float | None = None, memory_mb: int | None = None) -> JudgeSetup:
    if problem.judge_error:
        raise UserError(f"problem {problem.id} cannot be judged: {problem.judge_error}")
    limits = JudgeLimits(
        time_limit_s=time_limit_s or problem.time_limit_s, memory_mb=memory_mb or problem.memory_limit_mb
    )
    checker = SpecialJudge(problem.checker_source or "", "cpp") if problem.checker == "special" else problem.checker
    return JudgeSetup(limits, checker, problem.func_name if problem.kind == "functional" else None)


def format_failure(reason: str) -> Judgement:
    """No program could be extracted upstream: a format failure, every reward 0."""
    return Judgement(
        outcome=stored_outcome(Verdict.FORMAT),
        verdict=Verdict.FORMAT,
        highest_tier_passed=0,
        cpu_s=0.0,
        mem_mb=0.0,
        rewards=zero_rewards(),
        test_results=[],
        format_reason=reason,
    )


def _verdict(res: RunResult, limits: JudgeLimits) -> Verdict | None:
    """Everything but the output check. None means the run was clean.

    What the program did decides, not which limit's enforcement came first: a test that reached
    its memory cap (an OOM kill, a limit hit, or a peak above the limit) is MLE even when the
    clock stopped it, since a program held at its cap can spend its time in the kernel's reclaim,
    and how much depends on the machine's load."""
    sig = res.signal
    if res.oom_killed or res.cap_hit or res.mem_mb > limits.memory_mb:
        return Verdict.MLE
    if res.wall_backstop_fired or res.cpu_s > limits.time_limit_s or sig == signal.SIGXCPU:
        return Verdict.TLE
    if sig == signal.SIGXFSZ or len(res.stdout) > limits.output_mb << 20:
        return Verdict.OLE
    failed = sig is not None or res.exit_code != 0
    out_of_memory = any(m in res.stderr for m in ("MemoryError", "std::bad_alloc", "Cannot allocate memory"))
    # Under rlimits a crash at the address-space cap (a NULL malloc, a stack that cannot grow) is memory too.
    at_cap = sig is not None and res.mem_mb >= 0.9 * limits.memory_mb and res.accounting.startswith("rlimits")
    if (failed and out_of_memory) or at_cap:
        return Verdict.MLE
    if failed:
        return Verdict.RE
    return None


class _Checker:
    def __init__(self, spec: str | SpecialJudge, limits: JudgeLimits, backend: str):
        self.special = spec if isinstance(spec, SpecialJudge) else None
        self.kind, self.tol = ("special", 0.0) if self.special else checkers.parse_checker(spec)
        self.session: Session | None = None
        self.limits, self.backend = limits, backend

    def accepts(self, test: JudgeTest, got: str) -> tuple[bool, str]:
        if not self.special:
            ok = checkers.check(self.kind, self.tol, test.output, got)
            return ok, "" if ok else checkers.short_diff(test.output, got)
        if self.session is None:
            self.session = self._open_special()
        files = {"input.txt": test.input, "output.txt": got, "answer.txt": test.output}
        lim = JudgeLimits(time_limit_s=max(5.0, self.limits.time_limit_s), memory_mb=1024).for_test()
        res = self.session.run(lim, files=files, args=list(files))
        if res.exit_code in (0, 1, 2):  # testlib: 0 ok, 1 wrong answer, 2 presentation error
            return res.exit_code == 0, res.stderr[-300:]
        raise SandboxError(f"special judge failed (exit {res.exit_code}, signal {res.signal}): {res.stderr[-200:]}")

    def _open_special(self) -> Session:
        """A sandbox with the checker loaded: a C++ checker from the compile cache."""
        binary = None
        if self.special.language == "cpp":
            try:
                binary = special.compile_checker(self.special.source, self.backend)
            except special.CheckerCompileError as exc:
                raise SandboxError(str(exc)) from exc
        session = open_session(self.backend, allow_none=self.backend == "none")
        loaded = session.load(self.special.language, self.special.source, self.limits.for_compile(), binary=binary)
        if not loaded.ok:
            session.close()
            raise SandboxError(f"special judge does not load: {(loaded.error or '')[:300]}")
        return session

    def close(self):
        if self.session:
            self.session.close()


def judge(
    program: Program,
    tests: list[JudgeTest],
    limits: JudgeLimits | None = None,
    checker: str | SpecialJudge = "exact",
    *,
    backend: str = "bwrap",
    run_all: bool = False,
    func_name: str | None = None,
) -> Judgement:
    """Judge one program; sandbox errors are retried, then reported as SE (never the program's fault)."""
    limits = limits or JudgeLimits()
    if not tests:
        raise UserError("no tests to judge against")
    prelude = None  # LiveCodeBench's imports, run once per program in the sandbox (Session.load)
    if func_name:  # LiveCodeBench's call-based problems, judged by its rules
        program, checker = Program(lcb.functional_program(program.source, func_name), "python"), "functional"
        prelude = lcb.PRELUDE
    elif checker == "lcb" and program.language == "python":
        program, prelude = Program(lcb.stdin_program(program.source), "python"), lcb.PRELUDE
    for attempt in range(SE_RETRIES + 1):
        try:
            return _judge_once(program, tests, limits, checker, backend, run_all, prelude)
        except SandboxError as exc:
            error = str(exc)
            if attempt == SE_RETRIES:
                return _sandbox_error(tests, error)
    raise AssertionError("unreachable")


def _sandbox_error(tests: list[JudgeTest], error: str) -> Judgement:
    first = min(range(len(tests)), key=lambda i: tests[i].input_len)
    result = TestResult(first, tests[first].input_len, tier_of(tests[first].input_len), Verdict.SE, detail=error)
    return Judgement(
        outcome=stored_outcome(Verdict.SE),
        verdict=Verdict.SE,
        first_failing_test=first,
        first_failing_tier=result.tier,
        highest_tier_passed=0,
        cpu_s=0.0,
        mem_mb=0.0,
        rewards=zero_rewards(),
        test_results=[result],
    )


def _judge_once(program, tests, limits, checker_spec, backend, run_all, prelude=None) -> Judgement:
    order = sorted(range(len(tests)), key=lambda i: (tests[i].input_len, i))
    checker = _Checker(checker_spec, limits, backend)
    session = open_session(backend, tmpfs_mb=2 * limits.output_mb + 96, allow_none=backend == "none")
    try:
        loaded = session.load(program.language, program.source, limits.for_compile(), prelude=prelude)
        results: list[TestResult] = []
        first_fail: TestResult | None = None
        for i in order:
            test = tests[i]
            result = TestResult(i, test.input_len, tier_of(test.input_len), None)
            results.append(result)
            if not loaded.ok:
                result.verdict, result.detail = Verdict.CE, loaded.error or ""
            elif first_fail is None or run_all:
                if session.broken:  # the OOM killer took the launcher on an earlier test (run_all)
                    session.close()
                    session = open_session(backend, tmpfs_mb=2 * limits.output_mb + 96, allow_none=backend == "none")
                    session.load(program.language, program.source, limits.for_compile(), prelude=prelude)
                res = session.run(limits.for_test(), test.input)
                result.cpu_s, result.wall_s, result.mem_mb = res.cpu_s, res.wall_s, res.mem_mb
                result.verdict = _verdict(res, limits)
                if result.verdict is None:
                    ok, result.detail = checker.accepts(test, res.stdout)
                    result.verdict = Verdict.AC if ok else Verdict.WA
                elif result.verdict == Verdict.RE:
                    result.detail = res.stderr[-500:]
            if result.verdict != Verdict.AC and first_fail is None:
                first_fail = result
    finally:
        session.close()
        checker.close()
    reward = rewards(results)
    return Judgement(
        outcome=stored_outcome(first_fail.verdict if first_fail else None),
        verdict=first_fail.verdict if first_fail else Verdict.AC,
        first_failing_test=first_fail.index if first_fail else None,
        first_failing_tier=first_fail.tier if first_fail else None,
        highest_tier_passed=highest_tier_passed(reward),
        cpu_s=max((r.cpu_s for r in results), default=0.0),
        mem_mb=max((r.mem_mb for r in results), default=0.0),
        accounting=session.accounting,
        rewards=reward,
        test_results=[
            r if r is first_fail else replace(r, detail=r.detail[:DETAIL_KEPT])
            for r in sorted(results, key=lambda r: r.index)
        ],
    )
