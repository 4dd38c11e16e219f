"""RL training metrics as figures, in dashboard/plots.py's palette and layout."""

from __future__ import annotations

import plotly.graph_objects as go
import polars as pl

from backend.outcomes import OUTCOME_CLASSES
from dashboard.plots import COLORS, LAYOUT, NAMES


def training_curves(metrics: pl.DataFrame) -> dict[str, go.Figure]:
    """RL training metrics (step, name, value) as figures: reward, outcome classes, pass rate per
    R_k, KL and completion length. Metrics a run did not log are left out."""
    wide = metrics.pivot(on="name", index="step", values="value", aggregate_function="last").sort("step")
    figures = {}

    def lines(key: str, title: str, columns: dict[str, str], colors: dict[str, str] | None = None, pct=False, y=""):
        present = {c: n for c, n in columns.items() if c in wide.columns}
        if not present:
            return
        fig = go.Figure()
        for column, name in present.items():
            color = (colors or {}).get(column)
            fig.add_trace(
                go.Scatter(
                    x=wide["step"],
                    y=wide[column],
                    mode="lines+markers",
                    name=name,
                    line=dict(color=color) if color else None,
                    marker=dict(size=4),
                )
            )
        fig.update_layout(title=title, xaxis_title="step", yaxis_title=y, **LAYOUT)
        if pct:
            fig.update_layout(yaxis_tickformat=".0%", yaxis_range=[0, 1])
        figures[key] = fig

    lines("reward", "Mean reward per step", {"reward_mean": "reward (sandbox)"}, y="mean reward")
    lines(
        "outcomes",
        "Outcome classes of the step's completions",
        {f"frac_{c}": NAMES[c] for c in OUTCOME_CLASSES},
        {f"frac_{c}": COLORS[c] for c in OUTCOME_CLASSES},
        pct=True,
        y="fraction of completions",
    )
    tiers = {c: c.removeprefix("pass_") for c in wide.columns if c.startswith("pass_R_")}
    lines(
        "pass_per_tier",
        "Pass rate per R_k (tests with input < 10^k characters; 100% when a problem has none)",
        tiers,
        pct=True,
        y="completions passing R_k",
    )
    lines("kl", "KL to the reference policy", {"kl": "KL"}, y="KL (nats)")
    lines(
        "length",
        "Completion length (tokens)",
        {"completions/mean_length": "mean", "completions/max_length": "max"},
        y="tokens",
    )
    return figures
