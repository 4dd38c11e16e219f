"""How a number was made, in words (backend/analysis/provenance.py): the text `analyze` prints and
the dashboard's figures, CSVs and manifest carry."""

import tomllib

import polars as pl

from backend.analysis.provenance import Provenance, from_store
from backend.records import Experiment
from tests.conftest import ROOT


def test_every_part_in_words():
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    prov = Provenance(experiment="e1", experiment_name="sweep", difficulty="hard", opt_min_tier=3, solved_at=0.75,
                      averaging="per_sample", common_seeds=False)  # fmt: skip
    assert prov.lines() == [
        "experiment: sweep (e1)",
        "filters: difficulty = hard, platform = all, setting = all",
        "tier rule: a TLE/MLE whose first failing test is below tier 3 (input shorter than 10^2 characters) counts "
        "as a correctness failure (--opt-min-tier 3)",
        "solved threshold: solved = at least 75% of a problem's samples correct",
        "averaging: pooled over samples",
        "seeds: disjoint seeds per checkpoint",
        f"tool: frontier-lab {version}",
    ]
    assert prov.subtitle() == (
        "difficulty = hard, platform = all, setting = all · tier rule: TLE/MLE below tier 3 = correctness · "
        f"solved ≥ 75% · pooled over samples · disjoint seeds · frontier-lab {version}"
    )


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
