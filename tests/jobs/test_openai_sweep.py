"""A 2-α disk sweep of the lab's checkpoints through `--engine openai --serve "transformers serve …"`:
launched from the Launch form (AppTest), and from the CLI where its α = 1 server is killed mid-point
(the job starts it again) and then the job itself is killed (kill -9) and resumed; both runs store
the same rows, judged, and every page shows them. One slow test: six real servers start in it."""

import json
import os
import signal
import sys
from pathlib import Path

import psutil
import pytest

from backend.problems.build import build_builtin
from backend.records import Checkpoint, Experiment, Job, Sample
from backend.store import Store
from tests.conftest import ROOT, run_cli, wait_until
from tests.pages.test_apptest import PAGES, app
from tests.rollout.test_openai_jobs import rows  # what a run stored, sample by sample

LAB = ROOT / "artifacts" / "lab" / "checkpoints"
TRANSFORMERS = str(Path(sys.executable).parent / "transformers")
SERVE = f"{TRANSFORMERS} serve {{model}} --port {{port}} --host {{host}} --device cpu"
DO_SAMPLE = json.dumps({"generation_config": json.dumps({"do_sample": True})})
SLUGS = ["max-subarray", "gcd-of-array"]
PROBLEMS = [f"builtin/{s}" for s in SLUGS]
OPTIONS = {"n": 2, "seed": 3, "temperature": 1.0, "max_tokens": 32, "concurrency": 1}
TOTAL = 2 * len(PROBLEMS) * OPTIONS["n"]

pytestmark = pytest.mark.slow


def servers(folder: str) -> list[psutil.Process]:
    found = []
    for p in psutil.process_iter(["cmdline"]):
        cmd = p.info["cmdline"] or []
        if "serve" in cmd and folder in cmd and p.status() != psutil.STATUS_ZOMBIE:
            found.append(p)
    return found


def launch_from_the_form(db_path, monkeypatch) -> Job:
    at = app(db_path, monkeypatch, "launch")
    at.text_input(key="low-path").set_value(str(LAB / "low"))
    at.text_input(key="high-path").set_value(str(LAB / "high"))
    at.text_input(key="sweep-alphas").set_value("0, 1").run()
    at.multiselect(key="sweep-problems-builtin-").set_value(PROBLEMS)
    at.selectbox(key="sweep-engine").set_value("openai")
    at.text_input(key="sweep-serve").set_value(SERVE)
    at.text_input(key="sweep-extra_body").set_value(DO_SAMPLE)
    for name, value in OPTIONS.items():
        at.number_input(key=f"sweep-{name}").set_value(value)
    at.button(key="sweep-launch").click().run()
    assert not at.error, [e.value for e in at.error]
    (job,) = Store(db_path).select(Job)
    return job


def test_a_served_sweep_from_the_form_and_from_the_cli_killed_and_resumed_stores_the_same_rows(
    db_path, monkeypatch, tmp_path
):
    monkeypatch.setenv("FLAB_CACHE", str(tmp_path / "cache"))
    store = Store(db_path)
    build_builtin(store, only=SLUGS, progress=False)

    form_job = launch_from_the_form(db_path, monkeypatch)
    job = wait_until(lambda: (j := store.get(Job, form_job.id)).status in ("done", "failed") and j, timeout=1500,
                     interval=2, what="the form's sweep")  # fmt: skip
    assert job.status == "done", (job.error, Path(job.log_path).read_text()[-3000:])
    reference = rows(store, job.experiment_id)
    assert len(reference) == TOTAL and all(v[-1][0] for v in reference.values())  # every sample judged
    spec = store.get(Experiment, job.experiment_id).spec
    assert (spec["engine"], spec["serve"], spec["prompt_format"]) == ("openai", SERVE, "chat")

    # the same sweep from the CLI; its α = 1 server killed mid-point, then the job itself
    args = ["sweep", "--low", str(LAB / "low"), "--high", str(LAB / "high"), "--alphas", "0,1", "--engine", "openai",
            "--serve", SERVE, "--extra-body", DO_SAMPLE, "--db", str(db_path), "--detach"]  # fmt: skip
    for p in PROBLEMS:
        args += ["--problem", p]
    for name, value in OPTIONS.items():
        args += ["-n" if name == "n" else f"--{name.replace('_', '-')}", str(value)]
    started = run_cli(*args, env={"FLAB_CACHE": str(tmp_path / "cache")}, timeout=600)
    assert started.returncode == 0, started.stderr[-2000:]
    cli_job = next(j for j in store.select(Job) if j.id != form_job.id)
    exp = cli_job.experiment_id
    high = next(c for c in store.select(Checkpoint) if c.kind == "merged" and c.alpha == 1.0).path

    def stored() -> int:
        return store.count(Sample, {"experiment_id": exp})

    log = Path(cli_job.log_path)
    wait_until(lambda: stored() == TOTAL // 2, timeout=900, interval=1, what="α = 0's samples")
    wait_until(lambda: log.read_text().count("[server] ready on") == 2, timeout=900, interval=0.5,
               what="α = 1's server to answer")  # fmt: skip
    (first,) = servers(high)
    os.killpg(first.pid, signal.SIGKILL)  # the server dies mid-point
    wait_until(lambda: "starting it again (1/3)" in log.read_text(), timeout=300, interval=1, what="the restart")
    second = wait_until(lambda: [p for p in servers(high) if p.pid != first.pid], timeout=900, interval=0.5,
                        what="α = 1's second server")[0]  # fmt: skip
    assert stored() < TOTAL
    os.killpg(os.getpgid(store.get(Job, cli_job.id).pid), signal.SIGKILL)  # the job dies: no cleanup runs
    wait_until(lambda: not second.is_running() or second.status() == psutil.STATUS_ZOMBIE, timeout=60,
               what="the orphaned server to end")  # fmt: skip
    assert stored() < TOTAL

    resumed = run_cli("jobs", "resume", cli_job.id, "--db", str(db_path), env={"FLAB_CACHE": str(tmp_path / "cache")},
                      timeout=1500)  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert store.get(Job, cli_job.id).status == "done"
    assert rows(store, exp) == reference  # the killed and resumed run stored exactly the uninterrupted one's rows
    assert servers(high) == [] and servers(str(tmp_path / "cache")) == []  # no server left running

    for page in PAGES:  # every page shows the served sweep
        at = app(db_path, monkeypatch, page, {"exp": exp})
        assert not at.exception, (page, at.exception)
    frontier = app(db_path, monkeypatch, "frontier", {"exp": exp})
    assert len(frontier.dataframe[0].value) == 2  # one row per α
