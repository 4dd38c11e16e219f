"""`make run`'s server (scripts/run_dashboard.sh): Streamlit's own command line, started after this
process has loaded what the result pages import and drawn their figures once.

A fresh Streamlit server imports nothing of the app until the first browser session runs app.py,
so the first page opened, whichever it is, would pay for importing pandas, SciPy, Plotly and
DuckDB (2.6 s of a 6.3 s Frontier script on 2 loaded cores, py-spy) and for Plotly's first figure
(its classes and template load on first use: 0.68 s against 0.17 s for the same figures again).
Done here, before the server listens, they lengthen the server's start instead (docs/benchmarks.md).

Only modules that need no Streamlit runtime are loaded here: the pages' own modules declare
Streamlit caches, which belong to the server's runtime.
"""

from __future__ import annotations

import sys

# what the pages import, heaviest first (the rest of each page's imports is milliseconds)
MODULES = (
    "scipy.stats",  # backend.analysis.ensembles and resampling
    "pandas",
    "plotly.graph_objects",
    "polars",
    "pyarrow",
    "duckdb",
    "pydantic.dataclasses",  # what pydantic loads for the Launch page's specs with dataclass fields
    "backend.store",
    "backend.analysis.churn",
    "backend.analysis.ensembles",
    "backend.analysis.findings",
    "backend.analysis.frontier",
    "backend.analysis.recovery",
    "backend.analysis.trend",
    "dashboard.paper_views",
    "dashboard.passk_plots",
    "dashboard.plots",
    "dashboard.training_plots",
    "dashboard.scatter",
)


def preload() -> None:
    import importlib

    for name in MODULES:
        importlib.import_module(name)
    _draw_once()


def _draw_once() -> None:
    """The Frontier page's figures, from a made-up experiment of three α points and two problems:
    Plotly loads each figure class, validator and template on first use. Nothing is kept."""
    import polars as pl

    from backend.alpha import alpha_label
    from backend.analysis.frame import to_outcomes
    from backend.analysis.frontier import frontier_table
    from backend.analysis.trend import trend
    from backend.outcomes import OutcomeClass
    from dashboard.paper_views import trend_bands
    from dashboard.plots import outcome_fractions, solve_rate
    from dashboard.scatter import failure_scatter

    alphas, problems = [0.0, 0.5, 1.0], ["p0", "p1"]
    rows = [(f"c{i}", p, a) for i, a in enumerate(alphas) for p in problems]
    counts = pl.DataFrame(
        {
            "checkpoint_id": [c for c, _, _ in rows],
            "problem_id": [p for _, p, _ in rows],
            "n": [4] * len(rows),
            OutcomeClass.CORRECT: [1, 2] * 3,
            OutcomeClass.OPTIMIZATION_FAILURE: [1, 0] * 3,
            OutcomeClass.CORRECTNESS_FAILURE: [1, 1] * 3,
            OutcomeClass.FORMAT_FAILURE: [1, 1] * 3,
            "alpha": [a for _, _, a in rows],
            "kind": ["merged"] * len(rows),
            "label": [alpha_label(a) for _, _, a in rows],
            "difficulty": ["easy"] * len(rows),
            "platform": [None] * len(rows),
            "title": [p for _, p, _ in rows],
        }
    )
    outcomes = to_outcomes(counts)
    table = {"warm-up": frontier_table(outcomes)}
    for draw in (outcome_fractions, failure_scatter, solve_rate):
        draw(table, experiment="warm-up")
    trend_bands(trend(outcomes, replicates=10))


def main() -> None:
    preload()
    from streamlit.web.cli import main as streamlit

    streamlit(prog_name="streamlit")  # the arguments are Streamlit's: `run app.py --server.port …`


if __name__ == "__main__":
    sys.exit(main())
