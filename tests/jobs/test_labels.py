"""Extra checkpoints of a sweep or eval named with their reward: LABEL=FOLDER."""

from backend.records import Checkpoint
from backend.sweep.pipeline import eval_points
from backend.sweep.spec import SweepSpec, job_folders, labelled


def test_labelled_entries():
    assert labelled("R_2=runs/r2") == ("runs/r2", "R_2")
    assert labelled("runs/r2") == ("runs/r2", None)
    assert labelled("runs/a=b") == ("runs/a=b", None)  # an "=" inside a path names no label
    assert labelled("=runs/r2") == ("=runs/r2", None)


def test_an_extra_checkpoint_takes_the_label_its_spec_gives(jobs_db, endpoints):
    low, high = endpoints
    (first,) = eval_points(jobs_db, [low])
    assert first.label == "low" and jobs_db.get(Checkpoint, first.checkpoint_id).label == "low"
    (again,) = eval_points(jobs_db, [f"R_3={low}"])  # the same folder, now named by its reward
    assert again.checkpoint_id == first.checkpoint_id and again.label == "R_3" and again.path == low
    assert jobs_db.get(Checkpoint, first.checkpoint_id).label == "R_3"
    spec = SweepSpec(low=low, high=high, independent=[f"R_3={low}"])
    assert job_folders(spec) == [low, high, low]
