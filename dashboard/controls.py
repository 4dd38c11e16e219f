"""The sidebar's controls, each bound to the view state (dashboard/view.py), and the `Selection`
they make: what a page shows, which the page and the export zip both draw from
(dashboard/figures.py), so a figure in the zip is the figure on the page."""

from __future__ import annotations

import datetime
from collections.abc import Callable

import pandas as pd
import streamlit as st

from backend.alpha import alpha_text
from backend.analysis.provenance import empty_window_words, undated_words
from backend.errors import UserError
from backend.outcomes import OutcomeClass
from backend.problems.lcb import NAMED_WINDOWS, release_window
from backend.store_queries import EVERY_SAMPLE, SampleFilter
from backend.vocab import DIFFICULTIES, SETTINGS, SOLVED_AT
from dashboard import data, view
from dashboard.experiment_view import ExperimentView
from dashboard.figures import ORDERINGS, Selection, passk_defaults


def experiment_picker() -> str | None:
    """The experiment select box, bound to the view's experiment (?exp= in the URL)."""
    frame = result_experiments()
    if frame.empty:
        st.info(
            "No experiment with results yet: launch a sweep on the Launch page, "
            "or run `make run` to import the miniature lab."
        )
        return None
    ids = list(frame["id"])
    wanted = view.get("exp")
    if wanted and wanted not in ids:  # a stale or mistyped link: say so rather than switch silently
        st.warning(f"No experiment {wanted!r} with results in this database; showing the newest instead.")
    names = dict(zip(frame["id"], frame["name"], strict=True))
    exp = view.bound(
        st.sidebar.selectbox,
        "exp",
        "Experiment",
        ids,
        default=ids[0],
        format_func=lambda i: f"{names[i]}  ({i})",
        warn=False,  # said above, in the words of an experiment
    )
    note = frame.set_index("id").loc[exp, "note"]
    if isinstance(note, str) and note.strip():  # a missing note is NaN or None in the frame
        st.sidebar.caption(f"**What this shows:** {note}")
    return exp


def result_experiments() -> pd.DataFrame:
    """The experiments that hold samples, newest first (a database error stops the page with one line)."""
    try:
        frame = data.experiments()
    except UserError as err:
        st.error(str(err))
        st.stop()
    return frame[frame["kind"].isin(data.EXPERIMENT_KINDS_WITH_RESULTS)]


def filters(exp: str | None = None) -> SampleFilter:
    """Difficulty / setting / platform filters, the contest window (when the experiment's problems
    have dates, or a link names one) and the solved threshold, bound to the view."""
    out = {}
    for key, options in (("difficulty", ["all", *DIFFICULTIES]), ("setting", ["all", *SETTINGS])):
        value = view.bound(st.sidebar.selectbox, key, key.capitalize(), options, default="all")
        out[key] = None if value == "all" else value
    out["platform"] = view.bound(st.sidebar.text_input, "platform", "Platform", default="") or None
    if exp:
        out["since"], out["until"] = contest_window(exp, SampleFilter(**out))
    solved_at()
    return SampleFilter(**out)


ALL_DATES, CUSTOM = "all dates", "custom"


def contest_window(exp: str, f: SampleFilter) -> tuple[str | None, str | None]:
    """(since, until) of the sidebar's contest window: every date, a LiveCodeBench version's window
    (`?window=release_v5`, its dates from LiveCodeBench's README: backend/problems/lcb.py) or custom
    days (`?since=…&until=…`, both included). Offered when the experiment has dated problems."""
    dates = data.problem_dates(exp, f)
    asked = any(view.get(k) for k in ("window", "since", "until"))
    if not dates["dated"] and not asked:
        return None, None
    custom = bool(view.get("since") or view.get("until")) and view.get("window") in (None, CUSTOM)
    choice = view.bound(
        st.sidebar.selectbox,
        "window",
        "Contest window",
        [ALL_DATES, *NAMED_WINDOWS, CUSTOM],
        default=CUSTOM if custom else ALL_DATES,
        to_text=lambda w: "" if w == ALL_DATES else w,
        format_func=lambda w: w if w in (ALL_DATES, CUSTOM) else f"LiveCodeBench {w} ({' … '.join(release_window(w))})",
        help="Only problems whose contest date is inside the window (both ends included, as LiveCodeBench's own "
        "window); problems without a date are then left out, and counted on the page. "
        f"This experiment's dated problems: {dates['dated']}, from {dates['first']} to {dates['last']}.",
    )
    if choice == ALL_DATES:
        view.put("since", None)
        view.put("until", None)
        return None, None
    if choice != CUSTOM:
        view.put("since", None)
        view.put("until", None)
        return release_window(choice)
    first = datetime.date.fromisoformat(dates["first"]) if dates["first"] else datetime.date.today()
    last = datetime.date.fromisoformat(dates["last"]) if dates["last"] else first
    ends = []
    for key, label, default in (("since", "Contest dates from", first), ("until", "Contest dates until", last)):
        day = view.bound(
            st.sidebar.date_input,
            key,
            label,
            default=default,
            to_text=lambda d: d.isoformat(),
            from_text=datetime.date.fromisoformat,
            min_value=datetime.date(2000, 1, 1),
            max_value=datetime.date(2100, 12, 31),
        )
        ends.append(day.isoformat() if day else None)
    return ends[0], ends[1]


def opt_min_tier() -> int | None:
    """The Frontier's rule for time-outs on tiny inputs (AnalysisSpec.opt_min_tier, `analyze
    --opt-min-tier`): a TLE/MLE whose first failing test is below this tier counts as a
    correctness failure; none, the default, counts every TLE/MLE as an optimization failure."""
    value = view.bound(
        st.sidebar.selectbox,
        "tier",
        "Time-outs below tier count as wrong",
        ["none", *"234567"],
        default="none",
        help="Tier k: an input shorter than 10^k characters. A program that runs out "
        "of time on a 60-character input loops or is wrong; it is not slow at scale.",
    )
    return None if value == "none" else int(value)


def tier_rule(tier: int | None) -> str:
    """The rule a page's failure shares use for time-outs on tiny inputs, in words."""
    if tier is None:
        return (
            "Every time or memory failure counts as an optimization failure here, whatever the tier of its first "
            "failing test (the sidebar's tier rule, `analyze --opt-min-tier T`, counts those below tier T as "
            "correctness failures)."
        )
    return (
        f"A time or memory failure whose first failing test is below tier {tier} (an input shorter than "
        f"10^{tier - 1} characters) counts as a correctness failure here, as `analyze --opt-min-tier {tier}` "
        "counts it; the tier table (opened below) still lists every time-out by its tier."
    )


def sandbox_errors_line(v: ExperimentView) -> str | None:
    """One line naming the samples left out as sandbox errors, per checkpoint; None when there are none."""
    errors = v.sandbox_errors()
    if not errors["sandbox_errors"].sum():
        return None
    each = ", ".join(f"{label}: {n}" for label, n in zip(errors["label"], errors["sandbox_errors"], strict=True))
    return (
        f"{errors['sandbox_errors'].sum()} samples were sandbox errors (the judge's fault, not the program's) and "
        f"are left out of every number here ({each}); `analyze frontier --json` lists them as `sandbox_errors`."
    )


def no_failures_line(v: ExperimentView) -> str | None:
    """Why the failure charts are flat, when no sample failed by time, memory or a wrong answer; else None."""
    o = v.outcomes
    if (
        o.counts[OutcomeClass.OPTIMIZATION_FAILURE].sum() + o.counts[OutcomeClass.CORRECTNESS_FAILURE].sum()
    ) or not o.n.sum():
        return None
    share = o.counts[OutcomeClass.FORMAT_FAILURE].sum() / o.n.sum()
    return (
        f"No optimization or correctness failure among these samples: {share:.0%} are format failures (no runnable "
        "program: none, cut at the token limit, or not compiling) and the rest are correct, so both failure shares "
        "are 0 at every α and there is no frontier to draw. *Format failures by cause* (below) says which cause."
    )


def solved_at() -> float:
    """The one "solved" control: a problem is solved by a checkpoint when at least this share of
    its samples is correct. Every page that counts solved problems reads it from here."""
    view.put("solved", f"{_solved_state():g}")
    return view.bound(
        st.sidebar.slider,
        "solved",
        "Solved = solve rate at least",
        default=SOLVED_AT,
        to_text=lambda v: f"{v:g}",
        from_text=float,
        min_value=0.05,
        max_value=1.0,
        step=0.05,
        help=f"Default {SOLVED_AT:.0%}: most samples correct. Counts of solved problems on "
        "every page use this; the lab's findings use the default.",
    )


def _solved_state() -> float:
    try:
        current = float(view.get("solved") or SOLVED_AT)
    except ValueError:
        current = SOLVED_AT
    return min(1.0, max(0.05, round(current * 20) / 20))


def averaging() -> str:
    return view.bound(
        st.sidebar.radio,
        "avg",
        "Averaging",
        ["per_problem", "per_sample"],
        default="per_problem",
        format_func=lambda a: "per problem, then averaged" if a == "per_problem" else "pooled over samples",
    )


def overlay_picker(exp: str) -> list[str]:
    """Other experiments to draw on the same axes, bound to the view (?with=)."""
    frame = result_experiments()
    ids = [i for i in frame["id"] if i != exp]
    if not ids:
        return []
    names = dict(zip(frame["id"], frame["name"], strict=True))
    return view.bound(
        st.sidebar.multiselect,
        "with",
        "Overlay experiments",
        ids,
        default=[],
        to_text=",".join,
        from_text=lambda s: [i for i in s.split(",") if i in ids],
        format_func=lambda i: f"{names[i]}  ({i})",
        help="Draw other experiments on the same axes: other endpoint pairs, benchmarks or settings.",
    )


def stacked() -> bool:
    """The outcome chart as stacked fractions (?stack=on) rather than one panel per class with its CI."""
    return view.bound(
        st.sidebar.toggle,
        "stack",
        "Outcome chart: stacked (no CIs)",
        default=False,
        to_text=lambda on: "on" if on else "",
        from_text=lambda s: s == "on",
    )


def ordering() -> str:
    return view.bound(
        st.sidebar.radio, "order", "Row order", list(ORDERINGS), default="difficulty", format_func=ORDERINGS.get
    )


def grid_page(problems: int, rows: int) -> int:
    pages = max(1, -(-problems // rows))
    if pages == 1:
        return 1
    return view.bound(
        st.sidebar.number_input,
        "grid",
        f"Grid page (of {pages}, {rows} problems each)",
        default=1,
        to_text=str,
        from_text=int,
        min_value=1,
        max_value=pages,
    )


def passk_checkpoints(v: ExperimentView) -> list[str]:
    """The checkpoints drawn as single curves (?ck=), from the endpoints, the best by pass@1 and
    each checkpoint the gain table names as the best single at some k."""
    o = v.outcomes
    labels = dict(zip(o.checkpoints, o.labels, strict=True))
    return view.bound(
        st.multiselect,
        "ck",
        "Checkpoints",
        o.checkpoints,
        default=passk_defaults(v),
        to_text=lambda cs: ",".join(cs) or NONE,
        from_text=lambda s: [c for c in s.split(",") if c in o.checkpoints],
        format_func=labels.get,
    )


NONE = "none"  # ?ck=none: every single curve deselected (an empty value would mean "the default")


def custom_pool(v: ExperimentView) -> list[str]:
    o = v.outcomes
    labels = dict(zip(o.checkpoints, o.labels, strict=True))
    return view.bound(
        st.multiselect,
        "pool",
        "Pool builder: a custom ensemble",
        o.checkpoints,
        default=[],
        to_text=",".join,
        from_text=lambda s: [c for c in s.split(",") if c in o.checkpoints],
        format_func=labels.get,
    )


def selection(exp: str, f: SampleFilter) -> Selection:
    """What the pages show of this experiment, read from the view state (the widgets above write it):
    the page and the export zip both build their figures from this."""
    ck = view.get("ck")
    overlays = [i for i in (view.get("with") or "").split(",") if i and i != exp]
    return Selection(
        exp=exp,
        filters=f,
        solved_at=_solved_state(),
        averaging=view.get("avg") or "per_problem",
        overlays=tuple(overlays),
        ordering=view.get("order") or "difficulty",
        grid_page=int(view.get("grid") or 1),
        checkpoints=None if ck is None else tuple(c for c in ck.split(",") if c),
        custom=tuple(c for c in (view.get("pool") or "").split(",") if c),
        stacked=view.get("stack") == "on",
    )


def snapshot(v: ExperimentView) -> str:
    """What a page's figures are drawn from: its problems, judged samples and α points (they
    move together while a sweep runs, as they come from one read model)."""
    o = v.outcomes
    alphas = ", ".join(alpha_text(a) for a in o.alphas if a is not None)
    others = [label for label, a in zip(o.labels, o.alphas, strict=True) if a is None]
    return f"{len(o.problems)} problems, {v.samples} judged samples; α = {alphas or 'none'}" + (
        f"; also {', '.join(others)}" if others else ""
    )


def solved_words(at_least: float) -> str:
    return f"solved = solve rate ≥ {at_least:.0%} (its share of correct samples)"


def load_view(exp: str, f: SampleFilter = EVERY_SAMPLE) -> ExperimentView | None:
    """The experiment's read model under the filters, or one line saying why there is none (a contest
    window that leaves no problem says what the experiment's dates are); a window's undated problems
    are counted in a line of their own."""
    windowed = f.since or f.until
    dates = data.problem_dates(exp, f) if windowed else None
    try:
        v = data.experiment_view(exp, f)
    except UserError as err:
        st.warning(empty_window_words(f.since, f.until, dates) if windowed else str(err))
        return None
    if dates and dates["undated"]:
        st.caption(undated_words(dates["undated"]) + ".")
    return v


def page_header(title: str) -> tuple[str, SampleFilter, ExperimentView]:
    """Title, experiment picker and filters; stops the page when there is nothing to show."""
    st.title(title)
    exp = experiment_picker()
    if not exp:
        st.stop()
    f = filters(exp)
    v = load_view(exp, f)
    if v is None:
        st.stop()
    return exp, f, v


def on_open(title: str, key: str, draw: Callable[[], None]) -> None:
    """A closed expander whose content is computed only once it is opened (Streamlit reruns the
    page on each toggle): tables below a page's charts stay out of its first render, where their
    queries and grids would take CPU the charts are drawn with (docs/benchmarks.md). Its open state is a
    query parameter named `key`, so a link opens what its sender had open."""
    with st.expander(title, key=key, on_change="rerun", bind="query-params") as box:
        if box.open:
            draw()
