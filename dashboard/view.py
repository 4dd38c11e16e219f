"""One view state for the whole app: the experiment, filters, solved threshold, averaging, the
problem and the α pair under study, and the experiments overlaid.

It lives in this browser session (so switching pages keeps it) and in every page's URL (so any
page's link restores its view). A link decides when its query parameters differ from what the app
last wrote to the URL (the user followed or pasted a link); otherwise the session decides, and a
widget changes the session through its on_change callback, before the page runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

# query parameter → what it holds; every page's URL carries the ones that are set
KEYS = {
    "exp": "experiment id",
    "difficulty": "difficulty filter",
    "setting": "setting filter",
    "platform": "platform filter",
    "window": "contest window: a LiveCodeBench version (release_v5) or custom",
    "since": "first contest day of a custom window (YYYY-MM-DD)",
    "until": "last contest day of a custom window (YYYY-MM-DD)",
    "solved": "solved threshold (solve rate)",
    "avg": "averaging of the frontier",
    "tier": "the Frontier's tier below which a time-out counts as a correctness failure",
    "stack": "the Frontier's outcome chart stacked (on) rather than one panel per class",
    "problem": "problem of the Problem page",
    "alpha": "α of the samples view's left side",
    "vs": "α of the samples view's right side",
    "with": "experiments overlaid (comma-separated ids)",
    "order": "row order of the churn grid",
    "grid": "page of the churn grid",
    "ck": "checkpoints drawn as single pass@k curves (comma-separated ids)",
    "pool": "members of the custom pass@k pool (comma-separated ids)",
    "k": "the k of the Checkpoints page's pass@k column",
    "sort": "the Checkpoints page's row order",
    "token": "access token, when the server is open to the network (app.py)",
}
_STATE, _WRITTEN = "_flab_view", "_flab_view_written"


def _state() -> dict[str, str]:
    return st.session_state.setdefault(_STATE, {})


def sync() -> None:
    """At the start of every run (app.py): take what a followed link says, then write the whole
    state into the URL."""
    state, written = _state(), st.session_state.setdefault(_WRITTEN, {})
    for key in KEYS:
        given = st.query_params.get(key)
        if given is not None and given != written.get(key):
            state[key] = given
    for key, value in state.items():
        _write(key, value)


def _write(key: str, value: str) -> None:
    st.query_params[key] = value
    st.session_state[_WRITTEN][key] = value


def get(key: str, default: str | None = None) -> str | None:
    return _state().get(key, default)


def put(key: str, value: str | None) -> None:
    """Set one part of the view (None or "" removes it) in the session and the URL."""
    state = _state()
    if value is None or value == "":
        state.pop(key, None)
        st.session_state[_WRITTEN].pop(key, None)
        st.query_params.pop(key, None)
        return
    state[key] = value
    _write(key, value)


def link(**overrides: str) -> str:
    """A URL query string holding the whole view, with some parts changed (for markdown links)."""
    from urllib.parse import urlencode

    return urlencode({**_state(), **overrides})


def bound(
    make: Callable,
    key: str,
    label: str,
    options: Sequence | None = None,
    default=None,
    to_text: Callable = str,
    from_text: Callable = lambda s: s,
    warn: bool = True,
    **kwargs,
):
    """A widget whose value is the view's `key`: made by `make` (st.sidebar.selectbox, st.radio,
    …) under a widget key of its own; a value the options do not hold (a mistyped or stale link,
    `?alpha=7`) falls back to `default`, and one line says so (unless `warn` is off: the caller says it)."""
    widget_key = f"view-{key}"
    raw, bad = get(key), None
    try:
        value = from_text(raw) if raw is not None else default
    except ValueError:
        value, bad = default, raw
    if options is not None and not isinstance(value, list) and value not in options:
        value, bad = default, raw if raw is not None else bad
    if bad is not None and warn:
        shown = kwargs.get("format_func", str)(value) if value is not None else "nothing"
        st.warning(f"“{label}” has no choice {bad!r} here (from the link or an earlier page); showing {shown} instead.")
    # always (re)assigned: a widget of the same key on another page is another widget to Streamlit,
    # which would otherwise start it at its default and lose the view on every page switch
    st.session_state[widget_key] = value

    def changed():
        chosen = st.session_state[widget_key]
        _state()[key] = to_text(chosen) if chosen is not None else ""

    args = (label, options) if options is not None else (label,)
    chosen = make(*args, key=widget_key, on_change=changed, **kwargs)
    put(key, to_text(chosen) if chosen is not None else None)
    return chosen
