import json

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


def test_help_lists_db_commands():
    result = run_cli("--help")
    assert result.returncode == 0
    assert "db" in result.stdout
