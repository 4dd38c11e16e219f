"""One experiment as one self-contained HTML file (`frontier-lab report`, the Overview's button): the
Frontier's, Churn's and pass@k's figures as the pages draw them (plotly.js inlined once), the
checkpoint table with its tiers, the findings as sentences with their statuses and CIs, the
experiment's spec and the provenance. It asks no server for anything, so it opens offline, and its
print stylesheet lays it out as a paper-style PDF (A4, serif text, figures kept whole on a page).
Layout only: every number comes from the experiment's read model."""

from __future__ import annotations

import datetime
import html
import json
from pathlib import Path

import plotly.io as pio
import polars as pl

from backend.alpha import alpha_text
from backend.outcomes import OUTCOME_CLASSES

FIGURE_WIDTH = 960  # px: every figure drawn at one width (the scatter keeps its own), shrunk to fit a printed page
STYLE = """
body { font-family: Georgia, 'Times New Roman', serif; max-width: 1000px; margin: 2em auto; color: #222;
       line-height: 1.45; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { font-size: 1.25em; margin-top: 1.6em; }
.lede { color: #555; margin-top: 0; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.85em; }
table.booktabs { border-top: 2px solid #222; border-bottom: 2px solid #222; }
table.booktabs thead th { border-bottom: 1px solid #222; }
th, td { padding: 0.2em 0.6em; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.figure { margin: 1em 0; break-inside: avoid; page-break-inside: avoid; }
.status { font-weight: bold; }
dl { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1em; font-size: 0.85em; }
dt { font-weight: bold; } dd { margin: 0; }
.note { color: #555; font-size: 0.85em; }
@page { size: A4; margin: 16mm 14mm; }
@media print {
  body { max-width: none; margin: 0; padding: 0; font-size: 10pt; }
  .figure { zoom: 0.68; }
  h2 { break-after: avoid; page-break-after: avoid; }
  table { break-inside: avoid; }
}
"""


def report_html(db: str | Path, experiment: str) -> str:
    """The report of `experiment` in the database at `db` (see the module)."""
    import plotly.offline

    from backend.analysis.checkpoints import default_k
    from backend.errors import UserError
    from backend.records import Experiment
    from backend.store import Store
    from dashboard.experiment_view import ExperimentView
    from dashboard.figures import Selection, all_figures, provenance

    v = ExperimentView.build(db, experiment)
    sel = Selection(exp=experiment)
    row = Store(db, migrate=False).get(Experiment, experiment)
    prov = provenance(v, sel).stamped()
    figures = all_figures(v, sel)
    try:
        findings, why = v.findings(), None
    except UserError as err:
        findings, why = [], str(err)
    k = default_k(v.outcomes)
    parts = [
        f"<h1>{_e(row.name or experiment)}</h1>",
        f"<p class='lede'>{_e(experiment)} · {_e(row.kind)} · {v.samples} judged samples of "
        f"{len(v.outcomes.problems)} problems at {len(v.outcomes.checkpoints)} checkpoints · report made "
        f"{_e(prov.made or '')} by {_e(prov.tool())}</p>",
        f"<p>{_e(row.note)}</p>" if row.note else "",
        "<h2>Findings</h2>",
        _findings(findings, why),
        "<h2>The frontier along α</h2>",
        *[
            _figure(figures[n][0], n)
            for n in ("outcomes_vs_alpha", "frontier_scatter", "solve_rate", "trend_bands")
            if n in figures
        ],
        "<h2>Checkpoints</h2>",
        _checkpoint_table(v.checkpoints(k), k),
        "<h2>Churn</h2>",
        _figure(figures["churn_heatmap"][0], "churn_heatmap"),
        "<h2>pass@k and ensembles</h2>",
        *[_figure(figures[n][0], n) for n in ("passk_curves", "ensemble_gains") if n in figures],
        "<h2>The experiment's spec</h2>",
        _spec(row.spec or {}),
        "<h2>Provenance</h2>",
        "<dl>" + "".join(f"<dt>{_e(key)}</dt><dd>{_e(value)}</dd>" for key, value in prov.fields().items()) + "</dl>",
    ]
    title = f"{row.name or experiment}: frontier-lab report"
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>{_e(title)}</title><style>{STYLE}</style>"
        f"<script>{plotly.offline.get_plotlyjs()}</script></head><body>"
        + "\n".join(p for p in parts if p)
        + "</body></html>\n"
    )


def write_report(db: str | Path, experiment: str, out: str | Path) -> int:
    """Write the report to `out` (whole or not at all: a temporary file renamed); its size in bytes."""
    text = report_html(db, experiment).encode()
    out = Path(out)
    partial = out.with_name(out.name + ".partial")
    partial.write_bytes(text)
    partial.replace(out)
    return len(text)


def _e(value) -> str:
    return html.escape(str(value))


def _figure(fig, name: str) -> str:
    """A figure drawn by the inlined plotly.js from its JSON (the page's figure, at one width)."""
    fig = fig.to_dict()
    fig["layout"].setdefault("width", FIGURE_WIDTH)
    spec = pio.to_json(fig, validate=False)
    config = json.dumps({"displaylogo": False, "responsive": False})
    return (
        f"<div class='figure' id='{name}'></div>"
        f"<script>(function(){{var f={spec};Plotly.newPlot('{name}',f.data,f.layout,{config});}})();</script>"
    )


def _findings(rows: list[dict], why: str | None) -> str:
    if why:
        return f"<p>Not checked: {_e(why)}</p>"
    from backend.analysis.findings_text import excluded_lines, overview_rows

    items = "".join(
        f"<li><b>{_e(r['finding'])}</b>: <span class='status'>{_e(r['status'])}</span>. {_e(r['in words'])} "
        f"<span class='note'>Criterion: {_e(r['criterion'])}</span></li>"
        for r in overview_rows(rows)
    )
    notes = "".join(f"<p class='note'>{_e(line)}</p>" for line in excluded_lines(rows))
    return f"<ul>{items}</ul>{notes}"


def _checkpoint_table(table: pl.DataFrame, k: int) -> str:
    from backend.analysis.checkpoints import tier_words

    def ci(r: dict, name: str) -> str:
        if r[name] is None or r[name] != r[name]:
            return "—"
        return f"{r[name]:.3f} [{r[f'{name}_lo']:.3f}, {r[f'{name}_hi']:.3f}]"

    head = ["checkpoint", "α", "tier", "problems", "pass@1 [95% CI]", f"pass@{k} [95% CI]", "optimization f.",
            "correctness f.", "format f."]  # fmt: skip
    body = "".join(
        "<tr>"
        + "".join(
            f"<td class='{'num' if i else ''}'>{_e(c)}</td>"
            for i, c in enumerate(
                [
                    r["label"],
                    "—" if r["alpha"] is None else alpha_text(r["alpha"]),
                    r["tier"],
                    r["problems"],
                    ci(r, "pass_at_1"),
                    ci(r, "pass_at_k"),
                    *(ci(r, cls) for cls in OUTCOME_CLASSES[1:]),
                ]
            )
        )
        + "</tr>"
        for r in table.iter_rows(named=True)
    )
    return (
        "<table class='booktabs' id='checkpoints'><thead><tr>"
        + "".join(f"<th>{_e(h)}</th>" for h in head)
        + f"</tr></thead><tbody>{body}</tbody></table><p class='note'>{_e(tier_words())}. CIs: bootstrap 95 % over "
        "problems.</p>"
    )


def _spec(spec: dict) -> str:
    def shown(value) -> str:
        if isinstance(value, list) and len(value) > 6:
            return f"{len(value)}: " + ", ".join(map(str, value[:4])) + ", …"
        return ", ".join(map(str, value)) if isinstance(value, list) else str(value)

    rows = "".join(
        f"<tr><th>{_e(key)}</th><td>{_e(shown(value))}</td></tr>"
        for key, value in spec.items()
        if value not in (None, [], "")
    )
    return f"<table class='booktabs'>{rows}</table>" if rows else "<p>No spec was stored with this experiment.</p>"


def report_name(experiment: str) -> str:
    return f"{experiment}-report-{datetime.date.today().isoformat()}.html"
