"""Jobs: live progress per stage, logs, cancel and resume."""

from pathlib import Path

import streamlit as st

from backend.errors import UserError
from backend.jobs import runner
from dashboard import data

st.title("Jobs")


@st.fragment(run_every=2)
def live_jobs() -> None:
    try:
        jobs = data.jobs()
    except UserError as err:
        st.error(str(err))
        return
    if not jobs:
        st.info("No jobs yet. Launch one on the Launch page.")
        return
    focus = st.query_params.get("job")
    specs = data.job_specs([j.experiment_id for j in jobs])
    for job in jobs:
        with st.container(border=True):
            elapsed = runner.elapsed_s(job)
            took = f" · {_duration(elapsed)} {'so far' if job.status == 'running' else 'elapsed'}" if elapsed else ""
            if job.status == "running":
                left = runner.eta_s(job)
                took += f" · ETA {_duration(left)}" if left else " · ETA once a stage has measured its rate"
            st.markdown(f"**{job.id}** · {job.kind} · `{job.status}` · experiment `{job.experiment_id}`{took}")
            params = runner.parameters(job.kind, specs.get(job.experiment_id))
            if params:
                st.caption(" · ".join(f"{title}: `{value}`" for title, value in params))
            for stage, p in runner.stages(job).items():
                eta = f", ETA {p['eta_s']:.0f}s" if p.get("eta_s") and job.status == "running" else ""
                st.progress(
                    min(1.0, p["done"] / max(p["total"], 1)),
                    text=f"{stage}: {p['done']}/{p['total']} ({p['rate']:.2f}/s{eta})",
                )
            for line in runner.actor_lines(job):
                st.caption(line)
            if job.error:
                st.error(job.error)
            c1, c2 = st.columns(2)
            if job.status in ("running", "queued") and c1.button("Cancel", key=f"cancel-{job.id}"):
                runner.cancel(data.open_store(), job.id)
                st.rerun()
            if job.status in ("failed", "cancelled") and c1.button("Resume", key=f"resume-{job.id}"):
                runner.resume(data.open_store(), job.id)
                st.rerun()
            if job.status == "done":
                c2.page_link("dashboard/frontier.py", label="Results", query_params={"exp": job.experiment_id})
            if job.log_path and Path(job.log_path).exists() and (focus == job.id or job.status == "running"):
                # plain text, not st.code: a code block makes the browser load and compile a 1.5 MB
                # syntax highlighter on every reload, which kept the card off the screen for seconds
                st.text("\n".join(Path(job.log_path).read_text().splitlines()[-15:]) or "(empty log)")
    if not any(j.status in ("running", "queued") for j in jobs):
        st.caption("Nothing is running; this page stops polling.")
        st.stop()


def _duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m" if hours else f"{minutes}m {secs:02d}s" if minutes else f"{secs}s"


live_jobs()
