"""Figure exports: standalone HTML, and PNG/SVG/PDF through kaleido driving Debian's Chromium.

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

import plotly.graph_objects as go
import polars as pl

from backend.records import Evaluation, Sample

FORMATS = ("html", "png", "svg", "pdf")
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


def figure_bytes(fig: go.Figure, fmt: str) -> bytes:
    """html (plotly.js embedded: works offline), or png/svg/pdf through kaleido."""
    if fmt == "html":
        return fig.to_html(include_plotlyjs=True, full_html=True).encode()
    _use_debian_chromium()
    with _engine_lock:
        return fig.to_image(format=fmt, width=1000, height=600, scale=2 if fmt == "png" else 1)


def figures_zip(
    figures: dict[str, go.Figure],
    formats: tuple[str, ...] = FORMATS,
    progress: Callable[[int, int], None] | None = None,
    data: dict[str, pl.DataFrame] | None = None,
) -> bytes:
    """Every figure in every format in one zip, and each figure's data as `<name>.csv` (data holds
    the table a figure was drawn from, by the figure's name); progress(done, total) after each file."""
    data = data or {}
    buf, total = io.BytesIO(), len(figures) * len(formats) + len(data)
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, table in data.items():
            z.writestr(f"{name}.csv", table.write_csv())
        for name, fig in figures.items():
            for fmt in formats:
                z.writestr(f"{name}.{fmt}", figure_bytes(fig, fmt))
                if progress:
                    progress(len(z.namelist()), total)
    return buf.getvalue()


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
