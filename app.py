"""frontier-lab dashboard: `streamlit run app.py` (or `make run`)."""

import threading

import streamlit as st

# Imported once at start-up, not on the first visit to a chart page.
import backend.analysis.churn
import backend.analysis.ensembles
import backend.analysis.frontier
import backend.plots  # noqa: F401

st.set_page_config(page_title="frontier-lab", layout="wide")
st.session_state["_flab_app_shell"] = True  # pages check it (pages/data.py:require_app_shell)


@st.cache_resource(show_spinner=False)
def _warm_up_once() -> bool:
    """Once per server process: the newest experiment's analysis computed in the background."""
    from pages import data

    threading.Thread(target=data.warm_up, name="flab-warm-up", daemon=True).start()
    return True


pages = [
    st.Page("pages/overview.py", title="Overview", icon=":material/home:", default=True),
    st.Page("pages/frontier.py", title="Frontier", icon=":material/show_chart:"),
    st.Page("pages/churn.py", title="Churn", icon=":material/grid_on:"),
    st.Page("pages/passk.py", title="pass@k", icon=":material/stacked_line_chart:"),
    st.Page("pages/problem.py", title="Problem", icon=":material/description:"),
    st.Page("pages/training.py", title="Training", icon=":material/model_training:"),
    st.Page("pages/launch.py", title="Launch", icon=":material/rocket_launch:"),
    st.Page("pages/jobs.py", title="Jobs", icon=":material/pending_actions:"),
]
current = st.navigation(pages, position="hidden")
with st.sidebar:
    st.markdown("### frontier-lab")
    for page in pages:
        st.page_link(page)
    st.divider()
try:
    current.run()
finally:  # after the first page is drawn (st.stop included), so its queries do not compete with the warm-up
    _warm_up_once()
