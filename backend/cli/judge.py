"""`python -m backend judge ...` (the exact contract scripts depend on; see docs/cli.md)."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import typer

from backend.cli.options import AS_JSON, DB, open_store, spec_command
from backend.errors import UserError
from backend.grading.judge import JudgeTest, Program, SpecialJudge, judge, judge_setup
from backend.grading.limits import JudgeLimits
from backend.grading.spec import JudgeSpec
from backend.records import Judgement, Problem, Test

CPP_SUFFIXES = (".cpp", ".cc", ".cxx", ".c++")


def _language_of(path: Path, given: str | None) -> str:
    if given:
        return given
    return "cpp" if path.suffix in CPP_SUFFIXES else "python"


def _read(path: Path, what: str) -> str:
    try:
        return path.read_text()
    except OSError as exc:
        raise UserError(f"cannot read {what} {path}: {exc.strerror}") from exc


def read_tests_jsonl(path: Path) -> list[JudgeTest]:
    tests = []
    for n, line in enumerate(_read(path, "tests file").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            tests.append(JudgeTest(str(row["input"]), str(row["output"])))
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise UserError(f'{path}:{n}: expected {{"input": str, "output": str}}, got {line[:60]!r}') from exc
    if not tests:
        raise UserError(f"{path} holds no tests")
    return tests


def _problem_tests(db: Path | None, problem_id: str) -> tuple[Problem, list[JudgeTest]]:
    store = open_store(db)
    problem = store.get(Problem, problem_id)
    if problem is None:
        raise UserError(f"no problem {problem_id!r} in {store.path}; see `python -m backend problems list`")
    return problem, [JudgeTest(t.input, t.output) for t in store.select(Test, {"problem_id": problem_id})]


@spec_command(JudgeSpec, AS_JSON, DB)
def judge_command(spec: JudgeSpec, as_json: bool = False, db=None) -> None:
    """Judge one program in the sandbox. Exit 0 whatever the verdict; 2 on a user error."""
    code, problem, tests, checker = spec.code, spec.problem, spec.tests, spec.checker
    time_limit, memory_limit = spec.time_limit_s, spec.memory_limit_mb
    program = Program(_read(code, "program"), _language_of(code, spec.language))
    stored = None
    if problem:
        stored, cases = _problem_tests(db, problem)
    else:
        cases = read_tests_jsonl(tests)
    if stored:
        setup = judge_setup(stored, time_limit, memory_limit)
        limits, check, func = setup.limits, setup.checker, setup.func_name
    else:
        given = {"time_limit_s": time_limit, "memory_mb": memory_limit}  # the others: JudgeLimits' defaults
        limits = JudgeLimits(**{k: v for k, v in given.items() if v is not None})
        check, func = "exact", None
    if checker:  # an explicit --checker wins over the stored problem's
        path = Path(checker)
        check = SpecialJudge(_read(path, "checker"), _language_of(path, None)) if path.is_file() else checker
    result = judge(program, cases, limits, check, backend=spec.backend, run_all=spec.run_all, func_name=func)
    if as_json:
        typer.echo(json.dumps(_summary(result)))
        return
    typer.echo(f"{result.verdict}  ({result.outcome})")
    for t in result.test_results:
        typer.echo(
            f"  test {t.index:>3}  tier {t.tier}  len {t.input_len:>8}  "
            f"{t.verdict or '-':<4} {t.cpu_s:6.3f}s {t.mem_mb:7.1f} MB"
        )
    typer.echo("  " + "  ".join(f"{k}={v:g}" for k, v in asdict(result.rewards).items()))


def _summary(judged: Judgement) -> dict:
    """`judge --json`'s object: the judgement without the tests' details."""
    return {
        "outcome": judged.outcome,
        "verdict": judged.verdict,
        "first_failing_test": judged.first_failing_test,
        "tests": [{k: v for k, v in asdict(t).items() if k != "detail"} for t in judged.test_results],
        "rewards": asdict(judged.rewards),
        "accounting": judged.accounting,
    }


def register(app: typer.Typer) -> None:
    app.command("judge")(judge_command)
