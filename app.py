"""frontier-lab dashboard: `streamlit run app.py` (or `make run`)."""

import streamlit as st

st.set_page_config(page_title="frontier-lab", layout="wide")

pages = [
    st.Page("pages/overview.py", title="Overview", icon=":material/home:", default=True),
]
st.navigation(pages).run()
