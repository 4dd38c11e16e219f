"""Figures a reviewer accepts (issue #57), checked in Chromium: the α charts' structure and
uncertainty as the page lays them out, the provenance of every download, and the pass@k page's
best single at each k."""

import csv
import io
import json
import re
import zipfile
from math import comb
from pathlib import Path

import numpy as np
import pytest

from backend.records import Evaluation
from tests.pages.browser import LAB, rows_of, wait_plots

pytestmark = pytest.mark.browser

# per chart: is its x axis α, its shapes, and its drawn curves and bands, by subplot (xaxis)
CHARTS = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(gd => {
    const L = gd._fullLayout;
    const axes = Object.keys(L).filter(k => /^xaxis\\d*$/.test(k));
    const drawn = gd._fullData.filter(t => t.visible === true);
    return {
        title: (L.title && L.title.text) || '',
        alpha: axes.some(k => ((L[k].title && L[k].title.text) || '').startsWith('α')),
        lines: (L.shapes || []).filter(s => s.type === 'line').map(s => ({x: s.x0, width: s.line.width, xref: s.xref})),
        rects: (L.shapes || []).filter(s => s.type === 'rect').map(s => ({x0: s.x0, x1: s.x1, xref: s.xref})),
        curves: drawn.filter(t => t.fill === 'none' && (t.mode || '').includes('lines'))
                     .map(t => ({xaxis: t.xaxis, bars: !!(t.error_y && t.error_y.visible), x: Array.from(t.x)})),
        bands: drawn.filter(t => t.fill === 'toself').map(t => ({xaxis: t.xaxis})),
    };
})"""


def check_alpha_chart(chart: dict) -> None:
    """Endpoint lines with a width at α = 0 and 1 and the extrapolated region shaded, on every
    panel; every curve with a CI band on its panel or error bars of its own."""
    panels = {c["xaxis"] for c in chart["curves"]}
    assert panels, chart["title"]
    for panel in panels:
        lines = [s for s in chart["lines"] if s["xref"] == panel]
        assert sorted(s["x"] for s in lines) == [0, 1], (chart["title"], panel)
        xs = [x for c in chart["curves"] if c["xaxis"] == panel for x in c["x"]]
        shaded = {(s["x0"], s["x1"]) for s in chart["rects"] if s["xref"] == panel}
        assert shaded == {(min(xs), 0), (1, max(xs))}, (chart["title"], panel)  # the lab sweeps -0.5 … 1.5
        bare = [c for c in chart["curves"] if c["xaxis"] == panel and not c["bars"]]
        bands = [b for b in chart["bands"] if b["xaxis"] == panel]
        assert len(bands) >= len(bare), (chart["title"], panel, len(bands), len(bare))
    assert chart["lines"] and all(s["width"] > 0 for s in chart["lines"]), chart["title"]


@pytest.mark.skipif(not (LAB / "recipe.json").is_file(), reason="no committed lab artifacts")
def test_every_alpha_chart_has_visible_endpoints_shaded_extrapolation_and_its_uncertainty(lab_server, page):
    manifest = json.loads((LAB / "recipe.json").read_text())
    exp = manifest["sweep_experiment"]
    seen = []
    overview = f"{lab_server}/?exp={exp}&open-styles=true&open-glance=true"
    for url, count in ((f"{lab_server}/frontier?exp={exp}", 4), (overview, 2)):
        page.goto(url)
        wait_plots(page, count)
        charts = page.evaluate(CHARTS)
        assert len(charts) >= count
        seen += [c for c in charts if c["alpha"]]
    # the Frontier's outcome, solve rate and trend charts; the Overview's program styles and its glance
    assert len(seen) == 5, [c["title"] for c in seen]
    outcome = seen[0]
    assert len({c["xaxis"] for c in outcome["curves"]}) == 4  # one panel per outcome class, each with its band
    for chart in seen:
        check_alpha_chart(chart)


def downloaded(page, button: str, timeout: int = 60000) -> bytes:
    target = page.get_by_role("button", name=button, exact=True).first
    target.wait_for(timeout=timeout)
    with page.expect_download(timeout=timeout) as download:
        target.click()
    return Path(download.value.path()).read_bytes()


def svg_text(svg: bytes) -> str:
    """The words an SVG shows, its text elements joined by spaces (a long subtitle wraps over several)."""
    return " ".join(" ".join(re.findall(r">([^<>]+)<", svg.decode())).split())


HARD = "difficulty = hard"
TIER_3 = "below tier 3"


def test_every_download_of_a_filtered_frontier_names_its_filter_and_tier_rule(server, page):
    page.goto(f"{server}/frontier?exp=exp-dash&difficulty=hard&tier=3")
    wait_plots(page, 4)
    table = downloaded(page, "CSV").decode()
    header = [line for line in table.splitlines() if line.startswith("# ")]
    assert any(HARD in line for line in header) and any(TIER_3 in line for line in header)
    assert any(line.startswith("# seeds: common seeds") for line in header)  # stored before the option: common
    rows = list(csv.DictReader(rows_of(table)))
    assert {r["n_samples"] for r in rows} == {"18"}  # the numbers are the filtered ones: 3 hard problems × 6

    page.get_by_role("button", name="Export: HTML · PNG · SVG · PDF").first.click()
    words = svg_text(downloaded(page, "SVG"))
    assert HARD in words and "TLE/MLE below tier 3 = correctness" in words

    page.get_by_role("button", name="Export all figures of this experiment (zip)").click()
    z = zipfile.ZipFile(io.BytesIO(downloaded(page, "Download the zip", timeout=600000)))
    manifest = json.loads(z.read("manifest.json"))
    assert HARD in manifest["provenance"]["filters"] and TIER_3 in manifest["provenance"]["tier rule"]
    assert manifest["values"]["difficulty"] == "hard" and manifest["values"]["opt_min_tier"] == 3
    assert {f"paper/{name}.pdf" for name in manifest["figures"]} <= set(z.namelist())
    assert all(name in manifest["files"] for name in z.namelist() if name != "manifest.json")
    assert z.read("solve_rate.csv").decode().startswith("# experiment: dashboard test sweep (exp-dash)\n")


def best_by_hand(store, exp: str, ks: list[int]) -> list[str]:
    """At each k, the merged checkpoint with the highest mean pass@k over problems, from the
    stored verdicts and pass@k = 1 − C(n−c, k)/C(n, k) (the unbiased estimator)."""
    cells: dict[tuple[str, str], list[int]] = {}
    for e in store.select(Evaluation, {"experiment_id": exp}):
        cells.setdefault((e.checkpoint_id, e.problem_id), []).append(e.outcome == "correct")
    merged = sorted({c for c, _ in cells if c.startswith("m")})
    problems = sorted({p for _, p in cells})
    best = []
    for k in ks:
        means = [np.mean([1 - comb(len(v) - sum(v), k) / comb(len(v), k) for p in problems
                          for v in [cells[c, p]]]) for c in merged]  # fmt: skip
        best.append(merged[int(np.argmax(np.round(means, 12)))])
    return best


def test_passk_draws_the_best_single_at_each_k_and_each_checkpoint_it_names(server, page, populated):
    page.goto(f"{server}/passk?exp=exp-dash")
    wait_plots(page, 2)
    traces = page.evaluate("""() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(gd =>
        gd._fullData.filter(t => t.visible === true).map(t => ({name: t.name, x: Array.from(t.x),
            y: Array.from(t.y), custom: t.customdata ? Array.from(t.customdata) : null})))""")
    passk, gains = traces
    (best,) = [t for t in passk if t["name"].startswith("best single at each k: ")]
    expected = best_by_hand(populated, "exp-dash", best["x"])
    assert best["custom"] == expected  # each k's best single, as the stored verdicts have it
    drawn = {t["name"] for t in passk}
    assert set(expected) <= drawn  # every checkpoint the gain table names has a curve of its own
    for checkpoint in set(expected):
        assert checkpoint in best["name"]  # and the curve's name says where each one is the best
    (zero,) = [t for t in gains if t["name"] == best["name"]]  # the gain figure names it too: its zero line
    assert zero["y"] == [0] * len(zero["x"]) and zero["custom"] == best_by_hand(populated, "exp-dash", zero["x"])
    table = downloaded(page, "CSV").decode()  # the gain table the page shows, with its provenance atop
    rows = [r for r in csv.DictReader(rows_of(table)) if r["pool"] == "best single"]
    assert [float(r["pass_at_k"]) for r in rows] == pytest.approx(best["y"])
