"""How a number was made, in words (backend/analysis/provenance.py): the text `analyze` prints and
the dashboard's figures, CSVs and manifest carry."""

import re
import subprocess
import tomllib

import polars as pl

from backend.analysis.provenance import Provenance, from_store, source_revision
from backend.records import Experiment
from tests.conftest import ROOT


def test_every_part_in_words():
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    prov = Provenance(experiment="e1", experiment_name="sweep", difficulty="hard", opt_min_tier=3, solved_at=0.75,
                      averaging="per_sample", common_seeds=False, since="2023-05-01", until="2025-01-31",
                      database="lab.duckdb", revision="commit 0123456789ab", made="2026-01-02")  # fmt: skip
    assert prov.lines() == [
        "experiment: sweep (e1)",
        "filters: difficulty = hard, platform = all, setting = all",
        "tier rule: a TLE/MLE whose first failing test is below tier 3 (input shorter than 10^2 characters) counts "
        "as a correctness failure (--opt-min-tier 3)",
        "solved threshold: solved = at least 75% of a problem's samples correct",
        "averaging: pooled over samples",
        "seeds: disjoint seeds per checkpoint",
        "contest window: contest dates 2023-05-01 … 2025-01-31, both included (LiveCodeBench release_v5's window); "
        "problems without a contest date are left out",
        "database: lab.duckdb",
        f"tool: frontier-lab {version}, commit 0123456789ab",
        "made: 2026-01-02",
    ]
    assert prov.subtitle() == (
        "difficulty = hard, platform = all, setting = all · contest dates 2023-05-01 – 2025-01-31 · tier rule: "
        f"TLE/MLE below tier 3 = correctness · solved ≥ 75% · pooled over samples · disjoint seeds · frontier-lab "
        f"{version}, commit 0123456789ab · lab.duckdb · 2026-01-02"
    )
    unwindowed = Provenance(experiment="e1").fields()
    assert unwindowed["contest window"] == "every problem, with or without a contest date"
    assert "made" not in unwindowed  # no time unless an export stamps one


def test_the_revision_is_the_checkouts_commit_and_says_whether_it_was_edited():
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    edited = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                            capture_output=True, text=True).stdout.strip()  # fmt: skip
    expected = f"commit {head.strip()[:12]}" + (", with uncommitted changes" if edited else "")
    assert source_revision() == expected


def test_an_export_is_stamped_to_the_second_and_a_figure_with_its_day():
    prov = Provenance(experiment="e1")
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", prov.stamped().fields()["made"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", prov.dated().fields()["made"])


def test_a_csv_with_its_provenance_atop_reads_back_as_the_table():
    from dashboard.exports import csv_text

    table = pl.DataFrame({"alpha": [0.0, 1.0], "correct": [0.25, 0.5]})
    text = csv_text(table, Provenance(experiment="e1"))
    assert text.startswith("# experiment: e1\n# filters: difficulty = all")
    assert pl.read_csv(text.encode(), comment_prefix="#").equals(table)


def test_seeds_scheme_from_the_stored_spec(store):
    store.put([Experiment(id="old", kind="sweep", name="old sweep", spec={"alphas": [0, 1]}),
               Experiment(id="new", kind="sweep", name="new sweep", spec={"common_seeds": False})])  # fmt: skip
    assert from_store(store, "old").common_seeds is True  # stored before the option: it drew common seeds
    assert from_store(store, "new").common_seeds is False
    assert from_store(store, "missing").fields()["seeds"] == "not recorded"
    assert from_store(store, "new").database == "test.duckdb"  # the database file's name
