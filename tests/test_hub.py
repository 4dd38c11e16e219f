"""Checkpoints and benchmarks by hub name, through the real huggingface_hub code against a hub
stand-in on 127.0.0.1 (tests/hub_standin.py): HF_ENDPOINT points at it, HF_HOME is the test's, and
nothing reaches the internet. huggingface_hub reads those variables when it is imported, so every
run is a subprocess, as a user's would be."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_cli
from tests.hub_standin import Hub
from tests.problems.test_loaders import lcb_row

# what a published checkpoint repo holds beside its weights: never downloaded
EXTRAS = {"README.md": b"# a model card\n", "pytorch_model.bin": b"\0" * 64, "optimizer.pt": b"\0" * 32}


def hub_env(hub: Hub, home, offline: bool = False, **extra) -> dict:
    """The stand-in's environment: no token or cache of the machine's, and online unless `offline`
    (said either way: run_cli lays this over the suite's own HF_HUB_OFFLINE=1, tests/conftest.py)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env |= {"HF_ENDPOINT": hub.endpoint, "HF_HOME": str(home), "HF_HUB_DISABLE_TELEMETRY": "1",
            "HF_HUB_OFFLINE": "1" if offline else "0", **extra}  # fmt: skip
    return env


RESOLVE = """
import json, sys
from backend.errors import UserError
from backend.hub import pinned, resolve_checkpoint
out = {}
for ref in sys.argv[1:]:
    try:
        out[ref] = {"path": str(resolve_checkpoint(ref)), "pinned": pinned(ref)}
    except UserError as err:
        out[ref] = {"error": str(err)}
print(json.dumps(out))
"""


def resolve(env: dict, *refs: str) -> dict:
    done = subprocess.run([sys.executable, "-c", RESOLVE, *refs], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def files_of(folder) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def test_one_line_errors_unknown_gated_no_safetensors_offline(tmp_path):
    with Hub() as hub:
        hub.repo("lab/gated", gated=True).commit({"config.json": b"{}", "model.safetensors": b"x"})
        hub.repo("lab/old-format").commit({"config.json": b"{}", "pytorch_model.bin": b"\0" * 8})
        online = resolve(hub_env(hub, tmp_path), "lab/missing", "lab/gated", "lab/old-format", "lab/gated@v9")
        offline = resolve(hub_env(hub, tmp_path, offline=True), "lab/never-fetched")
        requests_before_offline = len(hub.requests)
        unreachable = resolve(hub_env(hub, tmp_path, HF_ENDPOINT="http://127.0.0.1:9"), "lab/typo")  # nothing listens
    said = {ref: r["error"] for ref, r in {**online, **offline, **unreachable}.items()}
    assert (
        said["lab/typo"]
        == "lab/typo is not in the hub cache and no local folder by that name, and http://127.0.0.1:9 cannot be reached"
    )
    assert said["lab/missing"].startswith(f"no model repo 'lab/missing' on {hub.endpoint} and no local folder")
    assert said["lab/gated"] == "lab/gated is a gated repo: accept its terms on its hub page, then set HF_TOKEN"
    assert said["lab/old-format"].startswith("lab/old-format: the hub repo has no .safetensors weights")
    assert said["lab/gated@v9"] == "lab/gated has no revision 'v9' (a branch, tag or commit)"
    assert (
        said["lab/never-fetched"].startswith("lab/never-fetched is not in the hub cache")
        and "HF_HUB_OFFLINE" in said["lab/never-fetched"]
    )
    assert all("\n" not in line for line in said.values())
    assert len(hub.requests) == requests_before_offline  # offline asked nothing


def test_a_gated_repo_downloads_with_hf_token(tmp_path):
    files = {"config.json": b"{}", "model.safetensors": b"weights"}
    with Hub() as hub:
        hub.repo("lab/gated", gated=True).commit(files | EXTRAS)
        said = resolve(hub_env(hub, tmp_path, HF_TOKEN="hf_test_token"), "lab/gated")["lab/gated"]
    assert "error" not in said, said
    assert said["pinned"] == f"lab/gated@{hub.repo('lab/gated').refs['main']}"
    assert files_of(Path(said["path"])) == files  # the token sent, the checkpoint's files fetched


def test_the_suite_never_reaches_the_hub(tmp_path):
    """tests/conftest.py makes the whole suite offline: this process and every child it starts with
    its environment (a CLI run, a job) answer a hub name from the cache or not at all."""
    from huggingface_hub import constants

    assert constants.HF_HUB_OFFLINE is True
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HOME", "HF_HUB_CACHE")} | {"HF_HOME": str(tmp_path)}
    said = resolve(env, "lab/anything")["lab/anything"]["error"]
    assert said == (f"lab/anything is not in the hub cache ({tmp_path / 'hub'}) and HF_HUB_OFFLINE is set; "
                    "download it once online")  # fmt: skip


def test_a_local_folder_wins_over_a_name_spelled_the_same(tmp_path, monkeypatch):
    from backend.hub import checkpoint_label, hub_ref

    assert hub_ref("Qwen/Qwen2.5-7B-Instruct") == ("Qwen/Qwen2.5-7B-Instruct", None)
    assert hub_ref("lab/run-r3@v1.2") == ("lab/run-r3", "v1.2")
    (tmp_path / "runs" / "low").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert hub_ref("runs/low") is None  # an existing folder
    assert hub_ref("./x/y") is None and hub_ref("/abs/x") is None and hub_ref("a/b/c") is None
    sha = "0123456789abcdef0123456789abcdef01234567"
    assert checkpoint_label(f"lab/low@{sha}") == "lab/low@0123456"
    assert checkpoint_label(tmp_path / "hub" / "models--lab--low" / "snapshots" / sha) == "lab/low@0123456"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from backend.lab.tiny import make_tiny_checkpoint

    root = tmp_path_factory.mktemp("tiny")
    return {name: make_tiny_checkpoint(root / name, seed=seed) for name, seed in (("low", 1), ("h1", 2), ("h2", 3))}


@pytest.fixture
def hub_with_tiny(tiny):
    """lab/low (one commit) and lab/high (two commits: the first is h1, main is h2), each with files a
    checkpoint is not read from."""
    with Hub() as hub:
        hub.repo("lab/low").commit(files_of(tiny["low"]) | EXTRAS)
        first = hub.repo("lab/high").commit(files_of(tiny["h1"]) | EXTRAS)
        hub.repo("lab/high").commit(files_of(tiny["h2"]) | EXTRAS)
        yield hub, first


@pytest.mark.slow
def test_names_resolve_pinned_and_cached_and_a_hub_copy_is_the_local_checkpoint(tmp_path, tiny, hub_with_tiny, store):
    from backend.merge.checkpoints import ensure_registered

    hub, first = hub_with_tiny
    main = hub.repo("lab/high").refs["main"]
    online = resolve(hub_env(hub, tmp_path), "lab/low", "lab/high", f"lab/high@{first}", str(tiny["low"]))
    assert online["lab/high"]["pinned"] == f"lab/high@{main}" and online["lab/low"]["pinned"].startswith("lab/low@")
    pinned_path = online[f"lab/high@{first}"]["path"]
    assert pinned_path.endswith(f"models--lab--high/snapshots/{first}")  # the pin, not main
    assert online[str(tiny["low"])] == {"path": str(tiny["low"]), "pinned": str(tiny["low"])}  # a folder stays one
    downloaded = {p.name for p in (tmp_path / "hub" / "models--lab--low" / "snapshots").glob("*/*")}
    assert downloaded == set(files_of(tiny["low"]))  # the checkpoint's files, none of EXTRAS
    assert not set(EXTRAS) & downloaded

    asked = len(hub.requests)
    offline = resolve(hub_env(hub, tmp_path, offline=True), "lab/low", f"lab/high@{first}")
    assert len(hub.requests) == asked  # read from the cache
    assert (
        offline["lab/low"]["path"] == online["lab/low"]["path"] and offline[f"lab/high@{first}"]["path"] == pinned_path
    )

    # one content, one checkpoint: the hub copy of h1 is the local h1, and main (h2) is another
    assert ensure_registered(store, pinned_path).id == ensure_registered(store, tiny["h1"]).id
    assert ensure_registered(store, online["lab/high"]["path"]).id == ensure_registered(store, tiny["h2"]).id
    assert ensure_registered(store, tiny["h1"]).id != ensure_registered(store, tiny["h2"]).id


PROBLEMS = ["builtin/count-pairs-sum", "builtin/max-subarray"]


@pytest.mark.slow
def test_a_sweep_on_two_hub_names_then_the_same_sweep_offline(tmp_path, tiny, hub_with_tiny, db_path):
    """End to end through the CLI: the experiment stores each name with its commit (θ_high pinned to
    its first commit, not main), its endpoints are the local checkpoints' ids, and a second run with
    HF_HUB_OFFLINE=1 reads the cache without asking the hub anything."""
    from backend.merge.checkpoints import ensure_registered
    from backend.problems.build import build_builtin
    from backend.records import Checkpoint, Experiment, Job
    from backend.store import Store

    hub, first = hub_with_tiny
    store = Store(db_path)
    build_builtin(store, only=[p.split("/")[1] for p in PROBLEMS], progress=False)
    low_sha = hub.repo("lab/low").refs["main"]
    args = ["sweep", "--low", "lab/low", "--high", f"lab/high@{first}", "--alphas", "0.5", "-n", "1",
            "--max-tokens", "16", "--db", str(db_path)] + [a for p in PROBLEMS for a in ("--problem", p)]  # fmt: skip
    cache = {"FLAB_CACHE": str(tmp_path / "flab-cache")}
    same = run_cli("sweep", "--low", str(tiny["h1"]), "--high", f"lab/high@{first}", "--db", str(db_path),
                   env=hub_env(hub, tmp_path, **cache))  # fmt: skip
    assert same.returncode == 2 and "θ_low and θ_high are the same checkpoint" in same.stderr, same.stderr[-2000:]
    runs = [run_cli(*args, env=hub_env(hub, tmp_path, **cache), timeout=600)]
    asked = len(hub.requests)
    runs.append(run_cli(*args, env=hub_env(hub, tmp_path, offline=True, **cache), timeout=600))
    assert len(hub.requests) == asked  # the offline run asked nothing
    for done in runs:
        assert done.returncode == 0, done.stderr[-3000:]
    jobs = store.select(Job, {})
    assert len(jobs) == 2 and all(j.status == "done" for j in jobs), jobs
    low_id, high_id = ensure_registered(store, tiny["low"]).id, ensure_registered(store, tiny["h1"]).id
    for job in jobs:
        exp = store.get(Experiment, job.experiment_id)
        assert (exp.spec["low"], exp.spec["high"]) == (f"lab/low@{low_sha}", f"lab/high@{first}")
        assert exp.name == f"α sweep lab/low@{low_sha[:7]} → lab/high@{first[:7]}"
    merged = store.select(Checkpoint, {"kind": "merged"})
    assert {(c.low_id, c.high_id, c.alpha) for c in merged} == {(low_id, high_id, 0.5)}


@pytest.mark.slow
def test_an_eval_on_hub_names_pins_each_name_and_keeps_a_given_label(tmp_path, tiny, hub_with_tiny, db_path):
    """The eval job's list field: LABEL=NAME keeps its label through pinning, a bare pinned name is
    labelled org/name@sha7, and the samples are the local checkpoints'."""
    from backend.merge.checkpoints import ensure_registered
    from backend.problems.build import build_builtin
    from backend.records import Checkpoint, Experiment, Job, Sample
    from backend.store import Store

    hub, first = hub_with_tiny
    store = Store(db_path)
    build_builtin(store, only=[p.split("/")[1] for p in PROBLEMS], progress=False)
    done = run_cli("eval", "--checkpoint", "R_2=lab/low", "--checkpoint", f"lab/high@{first}", "-n", "1",
                   "--max-tokens", "16", "--db", str(db_path), *[a for p in PROBLEMS for a in ("--problem", p)],
                   env=hub_env(hub, tmp_path, FLAB_CACHE=str(tmp_path / "flab-cache")), timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    (job,) = store.select(Job, {})
    assert job.status == "done", job
    exp = store.get(Experiment, job.experiment_id)
    assert exp.spec["checkpoints"] == [f"R_2=lab/low@{hub.repo('lab/low').refs['main']}", f"lab/high@{first}"]
    low_id, high_id = ensure_registered(store, tiny["low"]).id, ensure_registered(store, tiny["h1"]).id
    labels = {c.id: c.label for c in store.select(Checkpoint, {})}
    assert (labels[low_id], labels[high_id]) == ("R_2", f"lab/high@{first[:7]}")
    sampled = {(s.checkpoint_id, s.problem_id) for s in store.select(Sample, {"experiment_id": exp.id})}
    assert sampled == {(c, p) for c in (low_id, high_id) for p in PROBLEMS}


def lcb_repo(hub: Hub) -> None:
    """livecodebench/code_generation_lite as published: one JSONL file per release at the root."""
    files = {("test.jsonl" if n == 1 else f"test{n}.jsonl"):
             (json.dumps(lcb_row(f"q{n}", f"2024-0{n}-01")) + "\n").encode() for n in range(1, 7)}  # fmt: skip
    hub.repo("livecodebench/code_generation_lite", "dataset").commit(files | {"README.md": b"# LCB\n"})


@pytest.mark.slow  # three CLI runs
def test_lcb_import_by_name_downloads_only_the_versions_files_then_reads_the_cache_offline(tmp_path, db_path):
    from backend.records import Problem
    from backend.store import Store

    with Hub() as hub:
        lcb_repo(hub)
        done = run_cli("problems", "import", "lcb", "--hub", "--version", "release_v2", "--db", str(db_path),
                       env=hub_env(hub, tmp_path))  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip().endswith("imported 2 LiveCodeBench problems (4 tests)")
        fetched = sorted(r.rsplit("/", 1)[1] for r in hub.requests if r.startswith("GET /datasets/"))
        assert fetched == ["test.jsonl", "test2.jsonl"]  # release_v2's files, nothing else
        asked = len(hub.requests)
        again = run_cli("problems", "import", "lcb", "--hub", "--version", "v2", "--db", str(db_path),
                        env=hub_env(hub, tmp_path, offline=True))  # fmt: skip
        missing = run_cli("problems", "import", "lcb", "--hub", "--version", "v3", "--db", str(db_path),
                          env=hub_env(hub, tmp_path, offline=True))  # fmt: skip
        assert len(hub.requests) == asked
    assert again.returncode == 0 and "imported 1 LiveCodeBench problems" in again.stdout, again.stderr[-2000:]
    assert missing.returncode == 2 and missing.stderr.startswith(
        "error: livecodebench/code_generation_lite is not in the hub cache"
    ), missing.stderr
    assert {p.id for p in Store(db_path).select(Problem, {"bench": "lcb"})} == {"lcb/q1", "lcb/q2"}


def test_import_refuses_a_path_and_hub_together_and_an_unknown_config_before_downloading(tmp_path, db_path):
    both = run_cli("problems", "import", "lcb", str(tmp_path), "--hub", "--db", str(db_path))
    assert (
        both.returncode == 2 and both.stderr.strip() == "error: give the local path of LiveCodeBench or --hub, not both"
    )
    bad = run_cli("problems", "import", "ccplus", "--hub", "--config", "9x", "--db", str(db_path),
                  env={"HF_ENDPOINT": "http://127.0.0.1:9", "HF_HOME": str(tmp_path)})  # fmt: skip
    assert bad.returncode == 2 and "unknown CodeContests+ config '9x'" in bad.stderr, bad.stderr


def test_the_launch_pages_import_tab_offers_the_hub(store, db_path, monkeypatch, tmp_path):
    from tests.pages.test_apptest import app

    at = app(db_path, monkeypatch, "launch")
    next(s for s in at.selectbox if s.label == "Source").set_value("lcb")
    next(c for c in at.checkbox if c.label.startswith("Download the published files from the hub")).check()
    next(t for t in at.text_input if t.label.startswith("Local path")).set_value(str(tmp_path))
    next(b for b in at.button if b.label == "Import").click().run()
    assert [e.value for e in at.error] == ["give the local path of LiveCodeBench or --hub, not both"]


@pytest.mark.slow  # a CLI run
def test_ccplus_import_by_name_downloads_only_the_configs_shards(tmp_path, db_path):
    """ByteDance-Seed/Code-Contests-Plus as published: default shards at the root, one folder per config."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    from tests.problems.test_loaders import ccplus_rows

    def shard(tests: int) -> bytes:
        out = io.BytesIO()
        rows = [r | {"checker": None} for r in ccplus_rows(tests)]  # no testlib compile: not what is tested here
        pq.write_table(pa.Table.from_pylist(rows), out)
        return out.getvalue()

    name = "part-00000-of-00001.parquet"
    with Hub() as hub:
        hub.repo("ByteDance-Seed/Code-Contests-Plus", "dataset").commit(
            {name: shard(1), f"ccplus_1x/{name}": shard(2), f"ccplus_2x/{name}": shard(3), "paper.pdf": b"%PDF"}
        )
        done = run_cli("problems", "import", "ccplus", "--hub", "--config", "2x", "--db", str(db_path),
                       env=hub_env(hub, tmp_path))  # fmt: skip
        fetched = sorted(
            r.split("/resolve/", 1)[1].split("/", 1)[1] for r in hub.requests if r.startswith("GET /datasets/")
        )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("imported 2 CodeContests+ problems (4 tests)")  # 2x: 3 + 1 tests
    assert fetched == [f"ccplus_2x/{name}"]


@pytest.mark.slow  # two merges in CLI runs
def test_merge_by_hub_names_writes_the_tensors_of_the_local_merge(tmp_path, tiny, hub_with_tiny):
    hub, first = hub_with_tiny
    by_name = run_cli("merge", "--low", "lab/low", "--high", f"lab/high@{first}", "--alphas", "0.5",
                      "--out", str(tmp_path / "by-name"), env=hub_env(hub, tmp_path))  # fmt: skip
    local = run_cli("merge", "--low", str(tiny["low"]), "--high", str(tiny["h1"]), "--alphas", "0.5",
                    "--out", str(tmp_path / "local"))  # fmt: skip
    assert by_name.returncode == 0 and local.returncode == 0, by_name.stderr[-2000:] + local.stderr[-2000:]
    weights = sorted(p.name for p in (tmp_path / "local").glob("*.safetensors"))
    assert weights and weights == sorted(p.name for p in (tmp_path / "by-name").glob("*.safetensors"))
    import torch
    from safetensors.torch import load_file

    for name in weights:  # the same tensors, bit for bit (the headers differ: they record the input paths)
        ours, theirs = load_file(tmp_path / "by-name" / name), load_file(tmp_path / "local" / name)
        assert ours.keys() == theirs.keys()
        assert all(ours[k].view(-1).view(torch.uint8).equal(theirs[k].view(-1).view(torch.uint8)) for k in ours)


@pytest.mark.slow  # two CLI runs
def test_merge_inspect_by_hub_names_gives_the_local_figures(tmp_path, tiny, hub_with_tiny):
    hub, first = hub_with_tiny
    by_name = run_cli("merge", "inspect", "--low", "lab/low", "--high", f"lab/high@{first}", "--json",
                      env=hub_env(hub, tmp_path))  # fmt: skip
    local = run_cli("merge", "inspect", "--low", str(tiny["low"]), "--high", str(tiny["h1"]), "--json")
    assert by_name.returncode == 0 and local.returncode == 0, by_name.stderr[-2000:] + local.stderr[-2000:]
    figures = json.loads(local.stdout)
    assert 0 < figures["share_differ"] <= 1  # two different seeds: a comparison with something in it
    assert json.loads(by_name.stdout) == figures  # θ_high pinned to its first commit: h1, not main's h2
