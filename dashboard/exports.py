"""Exports: figures as JSON, standalone HTML, and PNG/SVG/PDF through kaleido driving Debian's
Chromium; tables as CSV/Parquet; the export zip; the raw samples as JSONL; and their download buttons.

kaleido starts a fresh Chromium for every image unless its server runs (about 2 s each on 2 cores),
so the dashboard starts the server once in the background and every export after that reuses it.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import threading
import warnings
import zipfile
from collections.abc import Callable
from typing import TYPE_CHECKING

import plotly.graph_objects as go
import plotly.io as pio
import polars as pl
import streamlit as st

from backend.records import Evaluation, Sample
from dashboard.image_metadata import with_metadata
from dashboard.plots import EXPORT_WIDTH, title_lines

if TYPE_CHECKING:
    from backend.analysis.provenance import Provenance
    from backend.store_queries import SampleFilter
    from dashboard.experiment_view import ExperimentView
    from dashboard.figures import Selection

FORMATS = ("json", "html", "png", "svg", "pdf")  # json: the figure itself, as the page draws it
_engine_lock = threading.Lock()  # kaleido's server answers one caller at a time (one shared reply queue)
# plotly passes its default options to a running server, which ignores them and warns every time
warnings.filterwarnings("ignore", message="The kopts argument is ignored if using a server")


def _use_debian_chromium() -> None:
    os.environ.setdefault("BROWSER_PATH", "/usr/bin/chromium")  # never let a tool fetch its own browser


def start_export_engine() -> None:
    """Start kaleido's Chromium once and render one tiny image through it, so the first PNG/SVG/PDF
    a user asks for does not pay the browser's start-up. Safe to call more than once."""
    import kaleido

    _use_debian_chromium()
    with _engine_lock:
        kaleido.start_sync_server(silence_warnings=True)
    figure_bytes(go.Figure(), "svg")


def export_engine_running() -> bool:
    from kaleido._sync_server import GlobalKaleidoServer

    return GlobalKaleidoServer().is_running()


def figure_bytes(fig: go.Figure, fmt: str, scale: float | None = None) -> bytes:
    """json (Plotly's, as Streamlit sends it to the page), html (plotly.js embedded: works
    offline), or png/svg/pdf through kaleido (a PNG at `scale`, 2 unless given)."""
    if fmt == "json":
        return pio.to_json(fig, validate=False).encode()
    if fmt == "html":
        return fig.to_html(include_plotlyjs=True, full_html=True).encode()
    _use_debian_chromium()
    with _engine_lock:  # a figure with its own size keeps it: the scatter's labels are placed for that size
        image = fig.to_image(
            format=fmt,
            width=fig.layout.width or EXPORT_WIDTH,
            height=fig.layout.height or 600,
            scale=(scale or 2) if fmt == "png" else 1,
        )
    return with_metadata(image, fmt, *described(fig))


def described(fig: go.Figure) -> tuple[str, str]:
    """(title, description) an image carries inside it: the figure's title and its provenance
    (layout.meta, dashboard/plots.py:with_provenance), which paper mode keeps though it draws no title."""
    meta = fig.layout.meta if isinstance(fig.layout.meta, dict) else {}
    title = meta.get("title") or title_lines(fig)[0] or "frontier-lab figure"
    lines = [f"{key}: {value}" for key, value in (meta.get("provenance") or {}).items()]
    lines += [meta["note"]] if meta.get("note") else []
    return title, "\n".join(lines) or "made with frontier-lab"


def paper_bytes(fig: go.Figure, fmt: str) -> bytes:
    """The figure in paper mode (dashboard/paper_mode.py) as PDF, SVG or PNG (300 dpi)."""
    from dashboard.paper_mode import PNG_SCALE, paper_figure

    return figure_bytes(paper_figure(fig), fmt, scale=PNG_SCALE if fmt == "png" else 1)


def figures_zip(
    figures: dict[str, go.Figure],
    formats: tuple[str, ...] = FORMATS,
    progress: Callable[[int, int], None] | None = None,
    data: dict[str, pl.DataFrame] | None = None,
    provenance: Provenance | None = None,
) -> bytes:
    """Every figure in every format in one zip, its paper-mode PDF and SVG under paper/, each
    figure's data as `<name>.csv` (data holds the table a figure was drawn from, by the figure's
    name) and `manifest.json`: how every file was made (the provenance, atop each CSV too) and
    what it holds. progress(done, total) after each file."""
    data = data or {}
    paper = ("pdf", "svg")
    buf, total = io.BytesIO(), len(figures) * (len(formats) + len(paper)) + len(data)
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, table in data.items():
            z.writestr(f"{name}.csv", csv_text(table, provenance))
        for name, fig in figures.items():
            for fmt in formats:
                z.writestr(f"{name}.{fmt}", figure_bytes(fig, fmt))
                if progress:
                    progress(len(z.namelist()), total)
            for fmt in paper:
                z.writestr(f"paper/{name}.{fmt}", paper_bytes(fig, fmt))
                if progress:
                    progress(len(z.namelist()), total)
        z.writestr("manifest.json", json.dumps(manifest(figures, data, provenance, z.namelist()), indent=2))
    return buf.getvalue()


def manifest(figures: dict[str, go.Figure], data: dict, provenance: Provenance | None, files: list[str]) -> dict:
    """The zip's manifest.json: the provenance in words and values, and each figure's title and files."""
    titles = {name: described(fig)[0] for name, fig in figures.items()}
    return (provenance.stamped().manifest() if provenance else {}) | {
        "figures": {name: {"title": titles[name], "data": f"{name}.csv" if name in data else None} for name in figures},
        "files": sorted(files),
    }


def csv_text(frame: pl.DataFrame, provenance: Provenance | None = None) -> str:
    """A table as CSV, its provenance (made now) above it as `# ` lines (read with comment_prefix="#")."""
    return (provenance.stamped().csv_header() if provenance else "") + frame.write_csv()


def samples_jsonl(store, experiment_id: str, problems: list[str], setting: str | None = None) -> bytes:
    """An experiment's raw samples with their verdicts, one JSON object a line, for the problems a
    filter kept (and one setting, when given)."""
    keep = set(problems)
    verdicts = {
        (e.checkpoint_id, e.problem_id, e.sample_idx): e
        for e in store.select(Evaluation, {"experiment_id": experiment_id})
    }
    lines = []
    for s in store.select(Sample, {"experiment_id": experiment_id}):
        if s.problem_id not in keep or (setting and s.setting != setting):
            continue
        e = verdicts.get((s.checkpoint_id, s.problem_id, s.sample_idx))
        row = dataclasses.asdict(s) | {"evaluation": dataclasses.asdict(e) if e else None}
        lines.append(json.dumps(row, ensure_ascii=False, default=str))
    return ("\n".join(lines) + "\n").encode() if lines else b""


def figure_downloads(fig, name: str) -> None:
    """Exports are built only once asked for: standalone HTML embeds all of plotly.js (~4.5 MB)
    and PNG/SVG/PDF go through kaleido, both too slow to redo on every render (app.py starts
    kaleido's browser in the background, so the first click does not wait for it)."""
    flag = f"render-{name}"
    if not st.session_state.get(flag):
        if st.button("Export: HTML · PNG · SVG · PDF", key=f"{name}-render", help="Prepare downloads (a few seconds)"):
            st.session_state[flag] = True
            st.rerun()
        return
    cols = st.columns(5)
    cols[0].download_button(
        "HTML", figure_bytes(fig, "html"), f"{name}.html", "text/html", key=f"{name}-html", on_click="ignore"
    )
    _image_buttons(cols[1:4], fig.to_json(), name, "", False)
    paper = st.columns([2, 1, 1, 1, 2])
    paper[0].caption("Paper mode (3.3 in wide, no title, vector first):")
    _image_buttons(paper[1:4], fig.to_json(), name, "paper ", True)


MIMES = {"png": "image/png", "svg": "image/svg+xml", "pdf": "application/pdf"}


def _image_buttons(cols, fig_json: str, name: str, prefix: str, paper: bool) -> None:
    for col, fmt in zip(cols, ("pdf", "svg", "png") if paper else ("png", "svg", "pdf"), strict=True):
        file = f"{name}-paper.{fmt}" if paper else f"{name}.{fmt}"
        try:
            payload = _cached_image(fig_json, fmt, paper)
            col.download_button(
                f"{prefix}{fmt.upper()}", payload, file, MIMES[fmt], key=f"{name}-{prefix}{fmt}", on_click="ignore"
            )
        except Exception as exc:  # kaleido needs Debian's chromium, which `make run` installs
            col.caption(f"{fmt.upper()} export unavailable: {str(exc)[:60]}")


@st.cache_data(show_spinner="Rendering…", max_entries=64)
def _cached_image(fig_json: str, fmt: str, paper: bool = False) -> bytes:
    fig = pio.from_json(fig_json)
    return paper_bytes(fig, fmt) if paper else figure_bytes(fig, fmt)


def table_downloads(frame: pl.DataFrame, name: str, provenance: Provenance | None = None) -> None:
    """CSV (its provenance atop, as `# ` lines) and Parquet (the provenance in its file metadata)."""
    cols = st.columns(2)
    cols[0].download_button(
        "CSV", csv_text(frame, provenance), f"{name}.csv", "text/csv", key=f"{name}-csv", on_click="ignore"
    )
    buf = io.BytesIO()
    frame.write_parquet(buf, metadata={"provenance": provenance.stamped().text()} if provenance else None)
    cols[1].download_button(
        "Parquet", buf.getvalue(), f"{name}.parquet", "application/octet-stream", key=f"{name}-parquet",
        on_click="ignore",
    )  # fmt: skip


def built_on_request(
    key: str, prepare: str, build: Callable[[], tuple[bytes, str]], file_name: str, mime: str, stamp
) -> None:
    """A download whose file takes seconds to build: built when its button is pressed, then kept in
    this session for this view (`stamp`) beside a download button that does not rerun the page. So
    a click on another download, or on anything else, does not lose it (the zip, 17–19 s to build
    under load, was lost whenever another download was clicked first). build() → (bytes, label)."""
    held = st.session_state.setdefault("_flab_built", {})
    if key in held and held[key][0] != stamp:
        del held[key]  # built for another view: it would not be this view's file
    if st.button(prepare, key=f"{key}-prepare"):
        held[key] = (stamp, *build())
    if key in held:
        _, payload, label = held[key]
        st.download_button(label, payload, file_name, mime, key=f"{key}-download", on_click="ignore")


def all_figures_zip(v: ExperimentView, sel: Selection) -> None:
    """Every figure of this view (frontier, churn, pass@k) as JSON, HTML, PNG, SVG and PDF in one
    zip, each titled with its experiment and with the data it was drawn from as CSV: the figures
    the pages draw for this selection (dashboard/figures.py), not a second rendering of them."""

    def build() -> tuple[bytes, str]:
        from dashboard.figures import all_figures, provenance

        built = all_figures(v, sel)
        bar = st.progress(0.0, text="Rendering every figure in five formats…")
        payload = figures_zip(
            {name: fig for name, (fig, _) in built.items()},
            data={name: t for name, (_, t) in built.items()},
            provenance=provenance(v, sel),
            progress=lambda done, total: bar.progress(done / total, text=f"Rendered {done} of {total} files…"),
        )
        bar.progress(1.0, text=f"{len(built)} figures and their data in {len(payload) / 1e6:.1f} MB")
        return payload, "Download the zip"

    built_on_request(
        "zip",
        "Export all figures of this experiment (zip)",
        build,
        f"{sel.exp}-figures.zip",
        "application/zip",
        (sel, v.stamp),
    )


def samples_download(exp: str, f: SampleFilter, problems: list[str]) -> None:
    """The raw samples behind this view (this experiment, these filters) as JSONL, built on request."""

    def build() -> tuple[bytes, str]:
        from dashboard import data

        payload = samples_jsonl(data.open_store(), exp, problems, f.setting)
        lines = payload.count(b"\n")
        return payload, f"Download {lines} samples"

    built_on_request(
        "jsonl", "Raw samples of this view (JSONL)", build, f"{exp}-samples.jsonl", "application/jsonl", (exp, f)
    )


def report_download(exp: str) -> None:
    """The experiment's self-contained report (dashboard/report.py), built on request."""

    def build() -> tuple[bytes, str]:
        from dashboard import data
        from dashboard.report import report_html

        with st.spinner("Writing the report: every figure, the checkpoint table, the findings…"):
            payload = report_html(data.db_path(), exp).encode()
        return payload, f"Download the report ({len(payload) / 1e6:.1f} MB HTML)"

    from dashboard import data
    from dashboard.report import report_name

    built_on_request(
        "report",
        "Report of this experiment (one HTML file, opens offline)",
        build,
        report_name(exp),
        "text/html",
        (exp, data.stamp(data.db_path(), exp)),
    )
