"""The merge cache shared by a sweep's tasks and by other jobs (issue #65): a running sweep's pinned
folders survive every eviction, what stays after it is its keep_merges choice, and a half-written
folder is reaped only by the node that writes it."""

import json
import os
import socket
import subprocess
import sys

import pytest

from backend.merge.cache import MergeCache, folder_bytes
from backend.merge.space import merged_bytes
from backend.merge.spec import Merge


def dead_pid() -> int:
    """A pid that no process of this node has now (a process that was started and has ended)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.fixture
def merged(pair, tmp_path):
    """(cache root, endpoints) with nothing merged yet."""
    low, high = pair()
    return tmp_path / "cache", (low, high)


def test_a_partial_folder_of_another_node_is_left_to_that_node(tmp_path):
    """On a cache every node shares, node B's merge in progress is `.KEY.partial-B-PID`; a PID that
    does not run here says nothing about B. Before: any partial whose PID was not alive here went."""
    root = tmp_path / "cache"
    pid = dead_pid()
    theirs = root / f".{'a' * 64}.partial-node-b-{pid}"
    ours = root / f".{'b' * 64}.partial-{socket.gethostname()}-{pid}"
    older = root / f".{'c' * 64}.partial-{pid}"  # named before partials carried their node: this node's rule
    alive = root / f".{'d' * 64}.partial-{socket.gethostname()}-{os.getpid()}"
    for folder in (theirs, ours, older, alive):
        folder.mkdir(parents=True)
        (folder / "model-00001.safetensors").write_bytes(b"half")
    removed = MergeCache(root).reap_partials()
    assert sorted(removed) == sorted([ours, older])
    assert theirs.is_dir() and alive.is_dir()


def test_eviction_keeps_every_running_sweeps_pinned_folders(merged):
    root, (low, high) = merged
    specs = [Merge.at_alpha(low, high, a) for a in (0.5, 1.5, 2.0)]
    one = merged_bytes(specs[0])
    cache = MergeCache(root, budget_bytes=int(one * 1.5))  # room for one folder and a half
    paths = cache.paths(specs)
    cache.pin("job-a", paths[:2])  # a sweep of two α, running
    first = cache.get(specs[:1], progress=False)
    second = cache.get(specs[1:2], progress=False)  # another task of that sweep: both over the budget
    assert first + second == paths[:2] and all((p / "merge.json").is_file() for p in paths[:2])
    third = cache.get(specs[2:], progress=False)  # another job's merge evicts what is not pinned: nothing
    assert {d for _, _, d in cache.entries()} == set(paths)
    assert cache.pinned() == {p.name for p in paths[:2]}
    cache.release("job-a", paths[:2], "budget")  # the sweep ended: the budget bounds what stays
    assert [d for _, _, d in cache.entries()] == third  # the most recently used fits; the sweep's went
    assert not (root / ".pins" / "job-a.json").exists()


def test_keep_merges_all_and_none_and_another_jobs_pin(merged):
    root, (low, high) = merged
    specs = [Merge.at_alpha(low, high, a) for a in (0.5, 1.5)]
    cache = MergeCache(root, budget_bytes=0)
    paths = cache.paths(specs)
    cache.pin("job-a", paths)
    cache.get(specs, progress=False)
    cache.release("job-a", paths, "all")
    assert {d for _, _, d in cache.entries()} == set(paths)  # every folder stays, over the budget
    cache.pin("job-a", paths)
    cache.pin("job-b", paths[1:])  # another running sweep reads α = 1.5
    cache.release("job-a", paths, "none")
    assert {d for _, _, d in cache.entries()} == {paths[1]}
    cache.release("job-b", paths[1:], "none")
    assert cache.entries() == []


def test_a_pin_of_a_dead_job_on_this_node_is_dropped_and_another_nodes_stays(merged):
    root, _ = merged
    (root / ".pins").mkdir(parents=True)
    here = socket.gethostname()
    (root / ".pins" / "gone.json").write_text(json.dumps({"host": here, "pid": dead_pid(), "folders": ["x"]}))
    (root / ".pins" / "far.json").write_text(json.dumps({"host": "node-b", "pid": dead_pid(), "folders": ["y"]}))
    assert MergeCache(root).pinned() == {"y"}
    assert sorted(p.name for p in (root / ".pins").iterdir()) == ["far.json"]


def test_the_room_a_merge_needs_is_its_folder(merged, tmp_path):
    """merged_bytes against the folder a merge writes: tensors in the output dtype and the copied
    files (the safetensors header and merge.json are the only bytes it leaves out)."""
    root, (low, high) = merged
    for dtype in ("auto", "float32"):
        spec = Merge.at_alpha(low, high, 0.5, dtype=dtype)
        (folder,) = MergeCache(root / dtype).get([spec], progress=False)
        written = folder_bytes(folder) - (folder / "merge.json").stat().st_size - (folder / ".last_used").stat().st_size
        assert 0 < written - merged_bytes(spec) < 16 << 10, dtype  # the header: a few KB
    assert merged_bytes(Merge.at_alpha(low, high, 0.5, dtype="float32")) > 1.9 * merged_bytes(
        Merge.at_alpha(low, high, 0.5)
    )  # bf16 endpoints: float32 folders hold twice the tensor bytes
