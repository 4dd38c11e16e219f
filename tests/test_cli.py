import json

import pytest

from tests.conftest import run_cli


def test_db_info_prints_path_version_and_counts(db_path):
    result = run_cli("db", "info", "--db", str(db_path), "--json")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["path"] == str(db_path)
    assert info["schema_version"] >= 1
    assert info["rows"]["samples"] == 0


def test_db_path_from_environment(db_path):
    result = run_cli("db", "info", "--json", env={"FLAB_DB": str(db_path)})
    assert json.loads(result.stdout)["path"] == str(db_path)


def test_bad_db_path_exits_2_with_one_line(tmp_path):
    result = run_cli("db", "info", "--db", str(tmp_path / "nope" / "x.duckdb"))
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert result.stderr.startswith("error: database folder")
    assert "Traceback" not in result.stderr


def test_help_lists_every_command_and_only_those():
    """The Commands box names exactly the stages docs/cli.md lists (written out here, not read from the app)."""
    result = run_cli("--help", env={"COLUMNS": "120"})
    assert result.returncode == 0, result.stderr
    box = result.stdout.split("Commands ", 1)[1]
    names = {line.split()[1] for line in box.splitlines() if line.startswith("│ ") and line[2] != " "}
    expected = {"db", "judge", "problems", "merge", "rollout", "sweep", "eval", "jobs", "analyze", "report", "power",
                "rl", "lab", "samples"}  # fmt: skip
    assert names == expected


def test_each_command_lives_in_the_module_named_after_it():
    """A reader looks for `judge` in backend/cli/judge.py (issue #48: it sat in the sandbox module,
    `sweep` and `eval` in the jobs one, `power` in the analysis one). Every function a command or a
    group's sub-command runs is defined in the module named after the command; the hidden docs
    helper `options-table` in the package itself."""
    import typer

    from backend.cli import _register_stages, app

    def callbacks(command):
        subs = getattr(command, "commands", {})
        return [command.callback] if not subs else [c for sub in subs.values() for c in callbacks(sub)]

    _register_stages()
    homes = {
        name: {f.__module__ for f in callbacks(command)}
        for name, command in typer.main.get_command(app).commands.items()
    }
    expected = {name: {f"backend.cli.{name}"} for name in homes} | {"options-table": {"backend.cli"}}
    assert homes == expected


@pytest.mark.slow
def test_rollout_command_takes_its_options_from_both_specs(tmp_path, db_path):
    """`rollout` builds RolloutSpec and SamplingSpec from one flag list: the stored experiment holds
    what was typed, the samples are there, and a bad choice is one line naming its flag."""
    from backend.lab.tiny import make_tiny_checkpoint
    from backend.records import Experiment, Problem, Sample, Test
    from backend.store import Store

    ckpt = make_tiny_checkpoint(tmp_path / "ckpt")
    store = Store(db_path)
    store.put([Problem(id=f"t/p{i}", bench="t", title=f"P{i}", statement="print 2") for i in range(2)])
    store.put([Test(problem_id=f"t/p{i}", idx=0, input="1\n", output="2\n", input_len=2, tier=1) for i in range(2)])
    flags = ["--checkpoint", str(ckpt), "--bench", "t", "-n", "3", "--max-tokens", "8", "--temperature", "0.7"]
    result = run_cli("rollout", *flags, "--setting", "reasoning", "--db", str(db_path), timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    (exp,) = store.select(Experiment)
    assert (exp.kind, exp.spec["setting"], exp.spec["problems"]) == ("rollout", "reasoning", [])
    assert (exp.spec["sampling"]["n"], exp.spec["sampling"]["temperature"], exp.spec["sampling"]["max_tokens"]) == (
        3,
        0.7,
        8,
    )
    assert sorted((s.problem_id, s.sample_idx) for s in store.select(Sample)) == [
        (f"t/p{i}", j) for i in range(2) for j in range(3)
    ]
    bad = run_cli("rollout", *flags, "--setting", "chat", "--db", str(db_path))
    assert bad.returncode == 2, bad.stderr
    assert bad.stderr.strip() == (
        "error: Invalid value for '--setting': 'chat' is not one of 'reasoning', 'tool', 'agentic'. (see --help)"
    )
    typo = run_cli("rollout", *flags, "--tempreature", "0.3", "--db", str(db_path))
    assert typo.returncode == 2 and typo.stderr.startswith("error: No such option: --tempreature"), typo.stderr
