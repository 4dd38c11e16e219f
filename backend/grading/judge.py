"""The judge: one program against a problem's tests, in ascending input length, in a sandbox.

`judge()` is a plain function of (program, tests, limits, ...) so it runs anywhere: in this
process, in a worker pool (pool.py) or in a Ray task.
"""

from __future__ import annotations

import signal
from dataclasses import asdict, dataclass, replace

from backend.errors import UserError
from backend.grading import checkers, lcb, special
from backend.grading.limits import JudgeLimits
from backend.grading.verdicts import (
    highest_tier_passed,
    outcome_of,
    rewards,
    short_diff,
    zero_rewards,
)
from backend.records import Evaluation, Problem, Rewards, SampleKey, TestResult, tier_of
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

    verdict: str
    tier: int
    input_len: int
    cpu_s: float | None = None  # None (and the limits): nothing ran, a compile error
    time_limit_s: float | None = None
    mem_mb: float | None = None
    memory_limit_mb: int | None = None
    diff: str = ""  # WA: the first differing line
    stderr: str = ""  # RE and CE: the end of stderr


DETAIL_KEPT = 300  # characters of a passing or later test's detail an evaluation keeps; the first failure's is whole


@dataclass
class JudgeResult:
    outcome: str
    verdict: str  # the first failing test's verdict, or AC
    first_failing_test: int | None
    first_failing_tier: int | None
    highest_tier_passed: int
    tests: list[TestResult]
    rewards: Rewards
    compile_error: str | None = None
    failure_context: FailureContext | None = None
    cpu_s: float = 0.0  # the largest per-test figures, for the store
    mem_mb: float = 0.0
    accounting: str | None = None  # how cpu_s and mem_mb were measured: cgroup-v2 | cgroup-v1 | rlimits
    format_reason: str | None = None  # FORMAT: why no program could be extracted

    def to_dict(self) -> dict:
        return {
            "outcome": self.outcome,
            "verdict": self.verdict,
            "first_failing_test": self.first_failing_test,
            "tests": [{k: v for k, v in asdict(t).items() if k != "detail"} for t in self.tests],
            "rewards": asdict(self.rewards),
            "accounting": self.accounting,
        }

    def evaluation(self, experiment_id: str, key: SampleKey) -> Evaluation:
        """The stored row of this result, for one sample of an experiment."""
        tests = [t if t.index == self.first_failing_test else _short_detail(t) for t in self.tests]
        return Evaluation(
            experiment_id=experiment_id,
            checkpoint_id=key.checkpoint_id,
            problem_id=key.problem_id,
            sample_idx=key.sample_idx,
            outcome=self.outcome,
            verdict=self.verdict,
            first_failing_test=self.first_failing_test,
            first_failing_tier=self.first_failing_tier,
            highest_tier_passed=self.highest_tier_passed,
            cpu_s=self.cpu_s,
            mem_mb=self.mem_mb,
            accounting=self.accounting,
            rewards=self.rewards,
            test_results=tests,
            format_reason=self.format_reason,
        )


def _short_detail(test: TestResult) -> TestResult:
    return replace(test, detail=test.detail[:DETAIL_KEPT])


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


def format_failure(reason: str) -> JudgeResult:
    """No program could be extracted upstream: recorded as format_failure, every reward 0."""
    return JudgeResult("format_failure", "FORMAT", None, None, 0, [], zero_rewards(), format_reason=reason)


def _verdict(res: RunResult, limits: JudgeLimits) -> str | None:
    """Everything but the output check. None means the run was clean.

    What the program did decides, not which limit's enforcement came first: a test that reached
    its memory cap (an OOM kill, a limit hit, or a peak above the limit) is MLE even when the
    clock stopped it, since a program held at its cap can spend its time in the kernel's reclaim,
    and how much depends on the machine's load."""
    sig = res.signal
    if res.oom_killed or res.cap_hit or res.mem_mb > limits.memory_mb:
        return "MLE"
    if res.wall_backstop_fired or res.cpu_s > limits.time_limit_s or sig == signal.SIGXCPU:
        return "TLE"
    if sig == signal.SIGXFSZ or len(res.stdout) > limits.output_mb << 20:
        return "OLE"
    failed = sig is not None or res.exit_code != 0
    out_of_memory = any(m in res.stderr for m in ("MemoryError", "std::bad_alloc", "Cannot allocate memory"))
    # Under rlimits a crash at the address-space cap (a NULL malloc, a stack that cannot grow) is memory too.
    at_cap = sig is not None and res.mem_mb >= 0.9 * limits.memory_mb and res.accounting.startswith("rlimits")
    if (failed and out_of_memory) or at_cap:
        return "MLE"
    if failed:
        return "RE"
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
            return ok, "" if ok else short_diff(test.output, got)
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
) -> JudgeResult:
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


def _sandbox_error(tests: list[JudgeTest], error: str) -> JudgeResult:
    first = min(range(len(tests)), key=lambda i: tests[i].input_len)
    result = TestResult(first, tests[first].input_len, tier_of(tests[first].input_len), "SE", detail=error)
    return JudgeResult("sandbox_error", "SE", first, result.tier, 0, [result], zero_rewards())


def _judge_once(program, tests, limits, checker_spec, backend, run_all, prelude=None) -> JudgeResult:
    order = sorted(range(len(tests)), key=lambda i: (tests[i].input_len, i))
    checker = _Checker(checker_spec, limits, backend)
    session = open_session(backend, tmpfs_mb=2 * limits.output_mb + 96, allow_none=backend == "none")
    try:
        loaded = session.load(program.language, program.source, limits.for_compile(), prelude=prelude)
        results: list[TestResult] = []
        first_fail: TestResult | None = None
        context = None
        for i in order:
            test = tests[i]
            result = TestResult(i, test.input_len, tier_of(test.input_len), None)
            results.append(result)
            if not loaded.ok:
                result.verdict, result.detail = "CE", loaded.error or ""
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
                    result.verdict = "AC" if ok else "WA"
                elif result.verdict == "RE":
                    result.detail = res.stderr[-500:]
                if result.verdict != "AC" and first_fail is None:
                    context = _failure_context(result, limits, test, res)
            if result.verdict != "AC" and first_fail is None:
                first_fail = result
    finally:
        session.close()
        checker.close()
    reward = rewards(results)
    return JudgeResult(
        outcome=outcome_of(first_fail.verdict if first_fail else None),
        verdict=first_fail.verdict if first_fail else "AC",
        first_failing_test=first_fail.index if first_fail else None,
        first_failing_tier=first_fail.tier if first_fail else None,
        highest_tier_passed=highest_tier_passed(reward),
        tests=sorted(results, key=lambda r: r.index),
        rewards=reward,
        compile_error=None if loaded.ok else loaded.error,
        failure_context=context or (_compile_context(loaded.error) if not loaded.ok else None),
        cpu_s=max((r.cpu_s for r in results), default=0.0),
        mem_mb=max((r.mem_mb for r in results), default=0.0),
        accounting=session.accounting,
    )


def _failure_context(result: TestResult, limits: JudgeLimits, test: JudgeTest, res: RunResult) -> FailureContext:
    return FailureContext(
        verdict=result.verdict,
        tier=result.tier,
        input_len=result.input_len,
        cpu_s=round(result.cpu_s, 3),
        time_limit_s=limits.time_limit_s,
        mem_mb=round(result.mem_mb, 1),
        memory_limit_mb=limits.memory_mb,
        diff=short_diff(test.output, res.stdout) if result.verdict == "WA" else "",
        stderr=res.stderr[-300:] if result.verdict == "RE" else "",
    )


def _compile_context(error: str | None) -> FailureContext:
    return FailureContext("CE", tier=1, input_len=0, stderr=(error or "")[-300:])
