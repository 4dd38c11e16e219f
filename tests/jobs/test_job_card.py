"""A job card's parameters read as words (issue #48): a switch is "yes"/"no", not Python's False."""

from backend.jobs.runner import parameters


def test_a_job_cards_switches_read_yes_or_no():
    shown = dict(parameters("sweep", {"low": "/a/low", "high": "/a/high", "alphas": [0.0, 0.5, 1.0],
                                      "live_switch": False}))  # fmt: skip
    assert shown["Switch α in the loaded model (write no merged folders)"] == "no"
    assert "False" not in shown.values() and shown["α grid"] == "0, 0.5, 1"


def test_a_card_lists_a_few_problem_ids_and_says_how_many_run():
    problems = [f"lab/p{i:02d}" for i in range(40)]
    shown = dict(parameters("sweep", {"low": "/a/low", "high": "/a/high", "problems": problems, "limit": 2}))
    assert shown["Problems"] == "2 of 40 picked (at most 2): lab/p00, lab/p01, lab/p02, … 37 more"
    assert dict(parameters("sweep", {"problems": problems[:2]}))["Problems"] == "lab/p00, lab/p01"


def test_a_running_jobs_eta_is_its_slowest_unfinished_stage():
    from backend.jobs.runner import eta_s
    from backend.records import Job

    progress = {"rollout": {"done": 10, "total": 40, "rate": 1.0, "eta_s": 30.0},
                "judge": {"done": 5, "total": 40, "rate": 0.5, "eta_s": 70.0},
                "merge": {"done": 3, "total": 3, "rate": 1.0, "eta_s": 0.0}, "actors": {}}  # fmt: skip
    assert eta_s(Job(id="j", kind="sweep", status="running", progress=progress)) == 70.0
    assert eta_s(Job(id="j", kind="sweep", status="done", progress=progress)) is None
    assert eta_s(Job(id="j", kind="sweep", status="running", progress={"rollout": {"done": 0, "total": 4}})) is None
