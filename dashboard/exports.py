"""Download buttons for figures (PNG, SVG, PDF, standalone HTML) and tables (CSV, Parquet)."""

from __future__ import annotations

import io

import polars as pl
import streamlit as st

from dashboard.export import figure_bytes


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
    cols[0].download_button("HTML", figure_bytes(fig, "html"), f"{name}.html", "text/html", key=f"{name}-html")
    for col, fmt, mime in zip(
        cols[1:4], ("png", "svg", "pdf"), ("image/png", "image/svg+xml", "application/pdf"), strict=True
    ):
        try:
            col.download_button(
                fmt.upper(), _cached_image(fig.to_json(), fmt), f"{name}.{fmt}", mime, key=f"{name}-{fmt}"
            )
        except Exception as exc:  # kaleido needs Debian's chromium, which `make run` installs
            col.caption(f"{fmt.upper()} export unavailable: {str(exc)[:60]}")


@st.cache_data(show_spinner="Rendering…", max_entries=64)
def _cached_image(fig_json: str, fmt: str) -> bytes:
    import plotly.io as pio

    return figure_bytes(pio.from_json(fig_json), fmt)


def table_downloads(frame: pl.DataFrame, name: str) -> None:
    cols = st.columns(2)
    cols[0].download_button("CSV", frame.write_csv(), f"{name}.csv", "text/csv", key=f"{name}-csv")
    buf = io.BytesIO()
    frame.write_parquet(buf)
    cols[1].download_button(
        "Parquet", buf.getvalue(), f"{name}.parquet", "application/octet-stream", key=f"{name}-parquet"
    )


def all_figures_zip(exp: str, f: dict, averaging: str) -> None:
    """Every figure of this experiment (frontier, churn, pass@k) as HTML, PNG, SVG and PDF in one
    zip, each titled with its experiment and with the data it was drawn from as CSV."""
    if not st.button("Export all figures of this experiment (zip)", key="zip-all"):
        return
    from backend.analysis.churn import order_problems, solve_matrix, solve_rates
    from backend.analysis.ensembles import passk_curves
    from backend.analysis.frontier import frontier_table
    from dashboard import data
    from dashboard.export import figures_zip
    from dashboard.plots import churn_heatmap, failure_scatter, outcome_fractions, solve_rate
    from dashboard.plots import passk_curves as passk_figure

    o = data.outcomes(exp, f["difficulty"], f["platform"], f["setting"])
    label = data.experiment_label(exp)
    table = frontier_table(o, averaging)
    curves = passk_curves(o)
    idx = [o.problems.index(p) for p in order_problems(o)]
    figures = {
        "outcomes_vs_alpha": outcome_fractions(table, experiment=label), "frontier_scatter": failure_scatter(table, experiment=label),
        "solve_rate": solve_rate(table, experiment=label),
        "churn_heatmap": churn_heatmap(solve_rates(o)[idx], [o.problems[i] for i in idx], [o.titles[i] for i in idx], o.labels,
                                       o.correct[idx], o.n[idx], experiment=label),
        "passk_curves": passk_figure(curves, experiment=label),
    }  # fmt: skip
    tables = {name: table for name in ("outcomes_vs_alpha", "frontier_scatter", "solve_rate")}
    tables |= {"churn_heatmap": solve_matrix(o), "passk_curves": curves}
    bar = st.progress(0.0, text="Rendering every figure in four formats…")
    payload = figures_zip(figures, data=tables,
                          progress=lambda done, total: bar.progress(done / total, text=f"Rendered {done} of {total} files…"))  # fmt: skip
    bar.progress(1.0, text=f"{len(figures)} figures and their data in {len(payload) / 1e6:.1f} MB")
    st.download_button("Download the zip", payload, f"{exp}-figures.zip", "application/zip", key="zip-download")


def samples_download(exp: str, f: dict, problems: list[str]) -> None:
    """The raw samples behind this view (this experiment, these filters) as JSONL, built on request."""
    if not st.button("Raw samples of this view (JSONL)", key="jsonl-prepare"):
        return
    from dashboard import data
    from dashboard.export import samples_jsonl

    payload = samples_jsonl(data.open_store(), exp, problems, f["setting"])
    count = payload.count(b"\n")
    st.download_button(f"Download {count} samples", payload, f"{exp}-samples.jsonl", "application/jsonl",
                       key="jsonl-download")  # fmt: skip
