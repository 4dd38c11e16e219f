"""Figures a reviewer accepts (issue #57), checked in Chromium: the α charts' structure and
uncertainty as the page lays them out, the provenance of every download, and the pass@k page's
best single at each k."""

import csv
import io
import itertools
import json
import re
import zipfile
from math import comb
from pathlib import Path

import numpy as np
import pytest

from backend.records import Evaluation
from dashboard.image_metadata import read_pdf_info
from tests.pages.browser import LAB, rows_of, shoot, wait_plots

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


TICKS = """() => { const svg = document.querySelector('svg');
    const box = (t) => { const r = t.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
    const x = Array.from(svg.querySelectorAll('.xtick text')), y = Array.from(svg.querySelectorAll('.ytick text'));
    return {width: +svg.getAttribute('width'), x: x.map(t => t.textContent), y: y.map(t => t.textContent),
            xboxes: x.map(box), yboxes: y.map(box), rows: new Set(y.map(t => t.textContent)).size}; }"""


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

    # the churn grid in paper mode, 3.3 in wide: every α labelled, unrotated, no two labels touching
    page.goto(f"{lab_server}/churn?exp={exp}")
    wait_plots(page, 1)
    page.get_by_role("button", name="Export: HTML · PNG · SVG · PDF").first.click()
    svg = downloaded(page, "paper SVG").decode()
    page.set_viewport_size({"width": 400, "height": 600})
    page.set_content(f"<html><body style='margin:0'>{svg}</body></html>")
    ticks = page.evaluate(TICKS)
    shoot(page, "paper-churn_heatmap.png")
    assert ticks["width"] == 317  # 3.3 in at 96 px to the inch
    assert ticks["x"] == ["−0.5", "−0.25", "0", "0.25", "0.5", "0.75", "1", "1.25", "1.5", "SFT"]  # every α, the SFT
    assert ticks["rows"] == 20 and len(ticks["y"]) == 20  # its 20 rows, every one labelled
    for axis in ("xboxes", "yboxes"):
        boxes = sorted(ticks[axis], key=lambda b: (b[0], b[1]))
        assert all(b[0] >= 0 and b[2] <= ticks["width"] for b in boxes), axis  # inside the figure
        for a, b in itertools.pairwise(boxes):  # no two labels overlap
            assert a[2] <= b[0] or a[3] <= b[1] or b[3] <= a[1], (axis, a, b)


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


# the title block's drawn lines: plotly.js draws a text of several lines (the subtitle's <br>s) as one
# <text> holding a <tspan class="line"> per line, a text of one line as the <text> alone
TITLE_BOXES = """() => { const svg = document.querySelector('svg');
    const lines = Array.from(svg.querySelectorAll('.g-gtitle text, text.gtitle-subtitle'))
        .flatMap(t => { const own = Array.from(t.querySelectorAll('tspan.line')); return own.length ? own : [t]; });
    const boxes = lines.map(t => t.getBoundingClientRect()).filter(b => b.width > 0);
    return {width: +svg.getAttribute('width'), height: +svg.getAttribute('height'), lines: boxes.length,
            top: Math.min(...boxes.map(b => b.top)), left: Math.min(...boxes.map(b => b.left)),
            right: Math.max(...boxes.map(b => b.right))}; }"""


def title_in_svg(page, svg: bytes) -> dict:
    """Where the title block lies in an exported SVG as Chromium draws it (the page itself at 0, 0)."""
    page.set_content(f"<html><body style='margin:0'>{svg.decode()}</body></html>")
    return page.evaluate(TITLE_BOXES)


def title_rows_in_png(png: bytes, band_px: int, scale: int = 2) -> dict:
    """In the PNG's title band: ink on its first rows (a title cut at the top) or last columns (a
    subtitle running off the right edge), and ink anywhere (a title drawn at all)."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("L")
    band = np.asarray(image)[: band_px * scale]
    ink = band < 140
    return {"top": bool(ink[:2].any()), "right": bool(ink[:, -3:].any()), "any": bool(ink.any())}


def check_titles_whole(page, z: zipfile.ZipFile, names: list[str]) -> None:
    """Every figure of the zip in PNG, SVG and PDF: its title and subtitle inside the figure."""
    from dashboard.image_metadata import read_pdf_info

    for name in names:
        layout = json.loads(z.read(f"{name}.json"))["layout"]
        width, height = layout.get("width", 1000), layout.get("height", 600)
        box = title_in_svg(page, z.read(f"{name}.svg"))
        assert box["lines"] >= 3, (name, box)  # the title, the experiment, the provenance
        assert box["top"] >= 0 and box["left"] >= 0 and box["right"] <= box["width"] == width, (name, box)
        png = title_rows_in_png(z.read(f"{name}.png"), layout["margin"]["t"])
        assert png == {"top": False, "right": False, "any": True}, (name, png)
        # kaleido prints the same drawing on a page of the figure's own size: a whole SVG is a whole PDF
        pdf = z.read(f"{name}.pdf")
        box = re.search(rb"MediaBox \[0 0 ([\d.]+) ([\d.]+)\]", pdf)
        assert (float(box[1]), float(box[2])) == pytest.approx((width * 0.75, height * 0.75), abs=1), name
        assert read_pdf_info(pdf)["Title"] == layout["meta"]["title"] != "Kaleido-fier", name


def test_every_download_of_a_filtered_frontier_names_its_filter_and_tier_rule(server, page):
    page.goto(f"{server}/frontier?exp=exp-dash&difficulty=hard&tier=3")
    wait_plots(page, 4)
    table = downloaded(page, "CSV").decode()
    header = [line for line in table.splitlines() if line.startswith("# ")]
    assert any(HARD in line for line in header) and any(TIER_3 in line for line in header)
    assert any(line.startswith("# seeds: common seeds") for line in header)  # stored before the option: common
    made = next(line for line in header if line.startswith("# made: "))  # the export's time and the code's commit
    assert re.fullmatch(r"# made: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", made)
    assert "# database: test.duckdb" in header and re.search(r"# tool: frontier-lab \S+, commit [0-9a-f]{12}", table)
    rows = list(csv.DictReader(rows_of(table)))
    assert {r["n_samples"] for r in rows} == {"18"}  # the numbers are the filtered ones: 3 hard problems × 6

    page.get_by_role("button", name="Export: HTML · PNG · SVG · PDF").first.click()
    words = svg_text(downloaded(page, "SVG"))
    assert HARD in words and "TLE/MLE below tier 3 = correctness" in words and "test.duckdb" in words
    paper = downloaded(page, "paper PDF")  # no title drawn: the PDF says what it is in its information
    info = read_pdf_info(paper)
    assert info["Title"] == "How samples fail as α moves" and "commit" in info["Subject"]
    assert "difficulty = hard" in info["Subject"] and "database: test.duckdb" in info["Subject"]

    page.get_by_role("button", name="Export all figures of this experiment (zip)").click()
    page.get_by_role("button", name="Download the zip").wait_for(timeout=600000)
    downloaded(page, "CSV")  # another download first: the zip, minutes to build under load, stays offered
    z = zipfile.ZipFile(io.BytesIO(downloaded(page, "Download the zip", timeout=600000)))
    manifest = json.loads(z.read("manifest.json"))
    assert HARD in manifest["provenance"]["filters"] and TIER_3 in manifest["provenance"]["tier rule"]
    assert manifest["values"]["difficulty"] == "hard" and manifest["values"]["opt_min_tier"] == 3
    assert manifest["provenance"]["database"] == "test.duckdb" and manifest["provenance"]["made"].endswith(" UTC")
    assert manifest["provenance"]["tool"].startswith("frontier-lab ") and "commit" in manifest["provenance"]["tool"]
    assert {f"paper/{name}.pdf" for name in manifest["figures"]} <= set(z.namelist())
    assert all(name in manifest["files"] for name in z.namelist() if name != "manifest.json")
    assert z.read("solve_rate.csv").decode().startswith("# experiment: dashboard test sweep (exp-dash)\n")
    figures = list(manifest["figures"])
    assert len(figures) == 7  # the Frontier's four, the churn grid, pass@k and the ensemble gains
    check_titles_whole(page, z, figures)
    for name in ("trend_bands", "ensemble_gains"):  # each names its experiment, as every figure does
        assert "dashboard test sweep (exp-dash)" in svg_text(z.read(f"{name}.svg")), name


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
    (best,) = [t for t in passk if t["name"].startswith("best single at each k: ") and "95% CI" not in t["name"]]
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
