"""frontier-lab dashboard: `streamlit run app.py` (or `make run`)."""

import hmac
import os
import threading
import time

import streamlit as st

# Imported once at start-up, not on the first visit to a chart page.
import dashboard.plots  # noqa: F401
from dashboard import prefetch, view

st.set_page_config(page_title="frontier-lab", layout="wide")


def _require_token() -> None:
    """When the server is open to the network (scripts/run_dashboard.sh sets FLAB_TOKEN), a session
    sees nothing until it has shown the token (?token=…); the view state keeps it in every page's
    URL, so a reload or a copied link keeps working, as Jupyter's links do."""
    token = os.environ.get("FLAB_TOKEN")
    if not token or st.session_state.get("_flab_token_ok"):
        return
    given = st.query_params.get("token", "")
    if hmac.compare_digest(given.encode(), token.encode()):
        st.session_state["_flab_token_ok"] = True
        return
    st.title("frontier-lab")
    st.error("This dashboard needs its access token: open the link printed when it started (…/?token=…).")
    st.stop()


_require_token()


# The first page's script has ended when the warm-up starts, but its browser is still drawing the
# charts: the warm-up's analysis and kaleido's Chromium start would take the CPU that drawing needs
# (on 2 cores they made the server spend 4-5 s of CPU inside the first render). They wait this long.
WARM_UP_DELAY_S = 3.0


@st.cache_resource(show_spinner=False)
def _warm_up_once() -> bool:
    """Once per server process, in the background, after the first page is drawn: the newest
    experiment's analysis, and the export engine (kaleido's Chromium), so neither the next chart
    page nor the first export waits."""
    from dashboard import data
    from dashboard.exports import start_export_engine

    def start() -> None:
        time.sleep(WARM_UP_DELAY_S)  # asleep, a daemon thread is harmless at exit; once started, the warm-up is stopped
        data.start_warm_up()
        _quietly(start_export_engine)()

    threading.Thread(target=start, name="flab-warm-up-start", daemon=True).start()
    return True


def _quietly(step):
    def run():
        try:
            step()
        except Exception:  # without Chromium the export buttons say so themselves
            return

    return run


# Icons are drawn from the Material Symbols font that Streamlit serves itself. A page's own icon
# would also become the tab's favicon, which Streamlit fetches from an external font host: on an
# offline cluster that request fails, so the pages carry none and the sidebar links carry the icons.
PAGES = [  # (file, title, sidebar icon)
    ("dashboard/overview.py", "Overview", ":material/home:"),
    ("dashboard/frontier.py", "Frontier", ":material/show_chart:"),
    ("dashboard/churn.py", "Churn", ":material/grid_on:"),
    ("dashboard/passk.py", "pass@k", ":material/stacked_line_chart:"),
    ("dashboard/checkpoints.py", "Checkpoints", ":material/table_rows:"),
    ("dashboard/problem.py", "Problem", ":material/description:"),
    ("dashboard/training.py", "Training", ":material/model_training:"),
    ("dashboard/launch.py", "Launch", ":material/rocket_launch:"),
    ("dashboard/jobs.py", "Jobs", ":material/pending_actions:"),
]
pages = [st.Page(path, title=title, default=i == 0) for i, (path, title, _) in enumerate(PAGES)]
current = st.navigation(pages, position="hidden")
# Links inside a page ("Results", "Follow job", "Open its frontier") are drawn as links: Streamlit
# styles every page link like a sidebar entry, which reads as plain text in the page body.
st.html("""<style>
[data-testid="stMain"] a[data-testid="stPageLink-NavLink"] p,
[data-testid="stMain"] a[data-testid="stPageLink-NavLink"] span { color: #0068c9; text-decoration: underline; }
</style>""")
with st.sidebar:
    st.markdown("### frontier-lab")
    for page, (_, _, icon) in zip(pages, PAGES, strict=True):
        st.page_link(page, icon=icon)
    st.divider()
    # while the page's queries run, so its first chart finds plotly.js loaded; the Overview opens
    # chart-free, and loads it once drawn, for the page the user opens next
    prefetch.plotly(after_page=current.url_path == "")
view.sync()  # the one view state (experiment, filters, α …): a followed link's, else this session's
try:
    current.run()
finally:  # after the first page is drawn (st.stop included), so its queries do not compete with the warm-up
    # not under AppTest: its runs share one process, and a warm-up thread left from one test's
    # app would import and query while the next test's run starts (a flaky RuntimeError)
    if not st.get_option("global.appTest"):
        _warm_up_once()
