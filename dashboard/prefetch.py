"""The browser loads plotly.js while the server computes the first page, not after.

Streamlit's frontend fetches and runs its Plotly chunk (4.7 MB of JavaScript) only when the first
chart arrives, which is after the page's queries: on a 2-core machine the page's first chart then
waited about a second for the chunk alone (docs/benchmarks.md). A sidebar element imports the
chunk as soon as the page opens, so the two overlap; Streamlit's own import later finds the module
already loaded (an ES module is fetched and run once per URL). A page that opens without a chart
(the Overview) imports it once its script has ended instead: running the chunk would hold the
browser's main thread while that page is drawn, and the chart page opened next still finds it.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import streamlit as st

# the chunk's URL beside the frontend's entry script, whatever path the server is mounted under
IMPORT = "import(new URL({name!r}, document.querySelector('script[src*=\"/static/js/index.\"]').src).href)"


@cache
def plotly_chunk() -> str | None:
    """The file name of Streamlit's Plotly chunk (hashed per release), or None in a build without one."""
    found = sorted((Path(st.__file__).parent / "static" / "static" / "js").glob("PlotlyChart.*.js"))
    return found[0].name if found else None


# Streamlit marks its app's element with the state of the page's script
SCRIPT_DONE = "document.querySelector('.stApp')?.getAttribute('data-test-script-state') === 'notRunning'"


def plotly(after_page: bool = False) -> None:
    """Start loading plotly.js in the browser (an empty element; a no-op in a build without the chunk).
    `after_page`: once the page's script has ended, for a page that draws no chart of its own: running
    the chunk takes the browser's main thread about a second, which the page's own drawing would wait for."""
    if name := plotly_chunk():
        load = IMPORT.format(name=name)
        if after_page:
            wait = f"while (!({SCRIPT_DONE})) await new Promise(r => setTimeout(r, 100));"
            load = f"{wait} await new Promise(r => setTimeout(r, 300)); {load}"
        # async: a page without the entry script throws inside it, which .catch() then swallows
        js = f"(async () => {{ {load} }})().catch(() => {{}})"
        st.html(f"<script>{js}</script>", unsafe_allow_javascript=True)
