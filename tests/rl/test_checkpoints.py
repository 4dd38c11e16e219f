"""RL checkpoints that fit a disk (issue #58): `rl --keep-checkpoints 2` keeps two checkpoint
folders, each with one safetensors weight set and no `pytorch_model*.bin`, the optimizer only in
the newest; a disk too small for the next save stops the run in one line while the last whole
checkpoint resumes. The disk is a real tmpfs of a fixed size (bubblewrap's --size), not a stand-in."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from backend.records import Test
from backend.rl.checkpoints import prune_resume_state
from tests.rl.test_rl import ECHO

pytestmark = pytest.mark.slow  # three GRPO steps of the tiny model on the CPU, in a process of its own

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def base(store, tmp_path):
    from backend.lab.tiny import make_tiny_checkpoint

    store.put([ECHO])
    store.put([Test(problem_id="t/one", idx=0, input="x\n", output="1\n", input_len=2, tier=1, is_public=True)])
    return make_tiny_checkpoint(tmp_path / "base")


def rl_argv(base: Path, out: Path, db: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "backend",
        "rl",
        "--base",
        str(base),
        "--out",
        str(out),
        "--db",
        str(db),
        "--reward",
        "R_inf",
        "--bench",
        "t",
        "--gpus",
        "0",
        "--num-generations",
        "2",
        "--per-device-train-batch-size",
        "2",
        "--max-completion-length",
        "8",
        "--save-steps",
        "1",
        *extra,
    ]


def env() -> dict:
    return os.environ | {"PYTHONPATH": str(ROOT)}


def files(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


def test_rl_keeps_two_checkpoints_with_one_weight_set_each(base, db_path, tmp_path):
    out = tmp_path / "out"
    done = subprocess.run(rl_argv(base, out, db_path, "--steps", "3", "--keep-checkpoints", "2"), env=env(),
                          cwd=ROOT, capture_output=True, text=True, timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert sorted(p.name for p in out.glob("checkpoint-*")) == ["checkpoint-2", "checkpoint-3"]
    for folder in (out / "checkpoint-2", out / "checkpoint-3"):
        assert sorted(p.name for p in folder.glob("*.safetensors")) == ["model.safetensors"]
        assert not list(folder.glob("pytorch_model*.bin"))
        assert json.loads((folder / "trainer_state.json").read_text())["global_step"] == int(folder.name[11:])
    assert {"optimizer.pt", "scheduler.pt", "rng_state.pth"} <= files(out / "checkpoint-3")  # what resume reads
    assert not files(out / "checkpoint-2") & {"optimizer.pt", "scheduler.pt", "rng_state.pth"}


def test_only_the_newest_whole_checkpoint_keeps_its_optimizer(tmp_path):
    for step, whole in ((1, True), (2, True), (3, False)):  # 3: torn by a kill mid-save
        folder = tmp_path / f"checkpoint-{step}"
        folder.mkdir()
        for name in ("model.safetensors", "optimizer.pt", "scheduler.pt", "rng_state.pth"):
            (folder / name).write_bytes(b"x")
        if whole:
            (folder / "trainer_state.json").write_text("{}")
        os.utime(folder, ns=(step * 10**9, step * 10**9))
    prune_resume_state(tmp_path)
    # transformers rotates by folder mtime: the pruned folder keeps its own
    assert [(tmp_path / f"checkpoint-{n}").stat().st_mtime_ns for n in (1, 2, 3)] == [10**9, 2 * 10**9, 3 * 10**9]
    assert files(tmp_path / "checkpoint-1") == {"model.safetensors", "trainer_state.json"}
    assert files(tmp_path / "checkpoint-2") == {"model.safetensors", "optimizer.pt", "scheduler.pt", "rng_state.pth",
                                                "trainer_state.json"}  # fmt: skip
    assert "optimizer.pt" in files(tmp_path / "checkpoint-3")  # not whole: the resume falls back to checkpoint-2


SMALL_DISK = """
"$PY" -m backend rl "$@" 2> "$ERR"; echo $? > "$RC"
cp -r "$OUT" "$KEEP"
"""


def test_a_full_disk_stops_before_the_save_and_the_last_checkpoint_resumes(base, db_path, tmp_path):
    """The tmpfs holds the first two saves (the second beside the first, before the optimizer of
    the first goes) but not a third beside those: the run must stop before writing step 3."""
    probe = tmp_path / "probe"
    done = subprocess.run(rl_argv(base, probe, db_path, "--steps", "1"), env=env(), cwd=ROOT,
                          capture_output=True, text=True, timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    sizes = {f.name: f.stat().st_size for f in (probe / "checkpoint-1").iterdir() if f.is_file()}
    whole = sum(sizes.values())
    pruned = whole - sum(v for k, v in sizes.items() if k in ("optimizer.pt", "scheduler.pt", "rng_state.pth"))
    # the guard asks 1.1 × the newest checkpoint's size: the second save finds 1.1 × whole + pruned / 2
    # free, the third (beside a pruned first and a whole second) 1.1 × whole - pruned / 2
    size = int(2.1 * whole + 0.5 * pruned)
    out, keep = Path("/flab-out"), tmp_path / "kept"
    wrapped = ["bwrap", "--dev-bind", "/", "/", "--size", str(size), "--tmpfs", str(out), "sh", "-c", SMALL_DISK,
               "sh", *rl_argv(base, out, db_path, "--steps", "3", "--keep-checkpoints", "2")[4:]]  # fmt: skip
    paths = {
        "PY": sys.executable,
        "ERR": str(tmp_path / "err"),
        "RC": str(tmp_path / "rc"),
        "OUT": str(out),
        "KEEP": str(keep),
    }
    subprocess.run(wrapped, env=env() | paths, cwd=ROOT, timeout=900, check=True)
    err = (tmp_path / "err").read_text().strip().splitlines()
    assert (tmp_path / "rc").read_text().strip() == "2", err[-20:]
    assert "failed: UserError: stopped before saving: the next checkpoint needs" in err[-1], err[-20:]
    assert "checkpoint-2 is whole and resumable" in err[-1] and not any("Traceback" in line for line in err)
    assert sorted(p.name for p in keep.glob("checkpoint-*")) == ["checkpoint-1", "checkpoint-2"]
    assert not (keep / "final").exists()
    # with room again, the job resumes from checkpoint-2 (left as it was) and finishes
    saved = (keep / "checkpoint-2" / "model.safetensors").stat().st_mtime_ns
    done = subprocess.run(rl_argv(base, keep, db_path, "--steps", "3", "--keep-checkpoints", "2"), env=env(),
                          cwd=ROOT, capture_output=True, text=True, timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert (keep / "checkpoint-2" / "model.safetensors").stat().st_mtime_ns == saved
    assert (keep / "checkpoint-3" / "trainer_state.json").is_file() and (keep / "final" / "model.safetensors").is_file()


RANK = """
import os, sys
import torch.distributed as dist
from pathlib import Path
from backend.rl.checkpoints import _any_rank, short_of_space
dist.init_process_group("gloo", rank=int(sys.argv[1]), world_size=2, init_method="tcp://127.0.0.1:" + sys.argv[2])
out = Path(sys.argv[3]) / f"rank{sys.argv[1]}"
need = 10**18 if sys.argv[1] == "1" else 0  # rank 1's disk is too small, rank 0's is not
line = short_of_space(out, trainable=0, weights=need // 4)
print(int(line is not None), int(_any_rank(line is not None)), flush=True)
dist.destroy_process_group()
"""


def test_two_gloo_processes_skip_the_save_together_when_one_disk_is_short(tmp_path):
    """accelerate 1.15 refuses FSDP without a GPU (docs/gpu.md), so the guard's collective answer
    is checked with two real gloo processes: the save is collective, and one rank short of space
    must stop both, or the other would wait in the save's gather forever."""
    from tests.jobs.ray_cluster import free_port

    port = str(free_port())
    ranks = [subprocess.Popen([sys.executable, "-c", RANK, str(r), port, str(tmp_path)], cwd=ROOT, env=env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for r in (0, 1)]  # fmt: skip
    answers = [p.communicate(timeout=180) for p in ranks]
    assert all(p.returncode == 0 for p in ranks), [err[-2000:] for _, err in answers]
    assert [out.split() for out, _ in answers] == [["0", "1"], ["1", "1"]]  # own answer, then the pair's


def test_a_run_stored_before_keep_checkpoints_existed_keeps_every_checkpoint_on_resume():
    from backend.rl.spec import RLSpec
    from backend.sweep.spec import stored_spec

    old = {"base": "b", "output_dir": "o", "steps": 10}  # a spec as stored before the field
    assert RLSpec(**stored_spec("rl", old)).keep_checkpoints == 0  # 0: TRL's save_total_limit None, no rotation
    assert RLSpec(**stored_spec("rl", old | {"keep_checkpoints": 3})).keep_checkpoints == 3
    assert RLSpec(base="b", output_dir="o").keep_checkpoints == 2  # a new run
