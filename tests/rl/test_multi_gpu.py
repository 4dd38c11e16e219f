"""RL on several GPUs without GPUs: the launch lines are read back by accelerate's and TRL's own
parsers, the refusals come before anything starts, and the driver's ingestion runs for real against
a stand-in for `accelerate launch` that keeps the worker's file contract."""

import dataclasses
import os
import sys
import time
from pathlib import Path

import pytest

from backend.errors import UserError
from backend.records import Checkpoint, Job, Metric
from backend.rl.follow import METRICS
from backend.rl.spec import RLSpec
from tests.conftest import run_cli


def spec(tmp_path, **kw) -> RLSpec:
    base = dict(base=str(tmp_path / "base"), output_dir=str(tmp_path / "out"), num_generations=4,
                per_device_train_batch_size=4)  # fmt: skip
    return RLSpec(**(base | kw))


def accelerate_args(argv: list[str]):
    from accelerate.commands.launch import launch_command_parser

    assert argv[:3] == [sys.executable, "-m", "accelerate.commands.launch"]
    return launch_command_parser().parse_args(argv[3:])


def test_four_gpus_colocated_launch_four_training_processes_with_accelerate(tmp_path):
    from backend.rl.launch import plan

    p = plan(spec(tmp_path, gpus=4, use_vllm=True), tmp_path / "task.pkl", ["2", "3", "5", "7"], 29511, 8011)
    args = accelerate_args(p.train_argv)
    assert (args.num_processes, args.main_process_port, args.main_process_ip) == (4, 29511, "127.0.0.1")
    assert args.config_file == str(tmp_path / "accelerate.yaml")  # beside the task file when no job log is given
    assert (args.module, args.training_script, args.training_script_args) == (
        True,
        "backend.rl.worker",
        [str(tmp_path / "task.pkl")],
    )
    assert p.train_env == {"CUDA_VISIBLE_DEVICES": "2,3,5,7"}
    assert p.server_argv is None and p.server_url is None


def launched_config(argv: list[str]):
    """What accelerate itself makes of our launch line: its parser, then its merge of the config
    file into the arguments (`_validate_launch_command`, what `accelerate launch` runs first)."""
    from accelerate.commands.config.config_args import load_config_from_file
    from accelerate.commands.launch import _validate_launch_command

    args = accelerate_args(argv)
    merged, _, _ = _validate_launch_command(args)
    return load_config_from_file(args.config_file), merged


def test_eight_gpus_write_an_fsdp_full_shard_config_that_accelerate_reads_back(tmp_path):
    """gpus 8 (the default sharding): FSDP full shard in bf16 mixed precision, activation
    checkpointing by FSDP, full state dicts (whole checkpoint-N folders); ddp: plain multi-GPU."""
    from accelerate.utils import DistributedType

    from backend.rl.launch import plan

    log_side = tmp_path / "job-1.accelerate.yaml"
    p = plan(spec(tmp_path, gpus=8), tmp_path / "task.pkl", [str(i) for i in range(8)], 29511, 8011, log_side)
    config, merged = launched_config(p.train_argv)
    assert (config.distributed_type, config.num_processes, config.mixed_precision) == (DistributedType.FSDP, 8, "bf16")
    fsdp = config.fsdp_config
    assert (fsdp["fsdp_sharding_strategy"], fsdp["fsdp_state_dict_type"]) == ("FULL_SHARD", "FULL_STATE_DICT")
    assert fsdp["fsdp_activation_checkpointing"] is True and fsdp["fsdp_offload_params"] is False
    assert merged.use_fsdp and not merged.multi_gpu and merged.num_processes == 8
    assert (merged.fsdp_sharding_strategy, merged.mixed_precision) == ("FULL_SHARD", "bf16")
    ddp = plan(spec(tmp_path, gpus=8, sharding="ddp", precision="fp32"), tmp_path / "task.pkl",
               [str(i) for i in range(8)], 29511, 8011)  # fmt: skip
    config, merged = launched_config(ddp.train_argv)
    assert (config.distributed_type, config.mixed_precision) == (DistributedType.MULTI_GPU, "no")
    assert merged.multi_gpu and not merged.use_fsdp


def test_four_gpus_in_server_mode_serve_on_the_first_and_train_on_three(tmp_path):
    from trl.scripts.vllm_serve import build_command, make_parser

    from backend.rl.launch import plan

    s = spec(tmp_path, gpus=4, use_vllm=True, vllm_mode="server")
    p = plan(s, tmp_path / "task.pkl", ["0", "1", "2", "3"], 29511, 8011)
    config, args = launched_config(p.train_argv)
    assert (args.num_processes, config.num_processes, args.use_fsdp) == (3, 3, True)
    assert p.train_env == {"CUDA_VISIBLE_DEVICES": "1,2,3"} and p.server_env == {"CUDA_VISIBLE_DEVICES": "0"}
    assert p.server_argv[:3] == [sys.executable, "-m", "trl.scripts.vllm_serve"]
    served, extra = make_parser().parse_args_and_config(p.server_argv[3:], return_remaining_strings=True)
    assert (served.model, served.host, served.port, served.tensor_parallel_size, extra) == (
        s.base,
        "127.0.0.1",
        8011,
        1,
        [],
    )
    vllm = build_command(served)  # what TRL runs: vLLM's own server on our address only
    assert vllm[vllm.index("serve") + 1 :][:5] == [s.base, "--host", "127.0.0.1", "--port", "8011"]
    assert p.server_url == "http://127.0.0.1:8011" and p.group_port is None  # run_launched passes a free one


def test_server_mode_trainer_options_point_grpo_at_the_server(tmp_path, monkeypatch):
    """The options GRPOConfig gets in server mode are ones it keeps (vLLM itself is not imported by the config)."""
    import importlib.util

    from trl import GRPOConfig

    from backend.rl import task

    monkeypatch.setattr(task, "cuda_available", lambda: True)
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: object() if name == "vllm" else real_find_spec(name, *a)
    )
    options = task.vllm_options(spec(tmp_path, gpus=3, use_vllm=True, vllm_mode="server"), "http://127.0.0.1:8011",
                                51999)  # fmt: skip
    assert options == {"use_vllm": True, "vllm_mode": "server", "vllm_server_base_url": "http://127.0.0.1:8011",
                       "vllm_group_port": 51999}  # fmt: skip
    assert task.vllm_options(spec(tmp_path, gpus=2, use_vllm=True)) == {"use_vllm": True, "vllm_mode": "colocate"}
    config = GRPOConfig(output_dir=str(tmp_path / "o"), use_cpu=True, report_to="none", **options)
    assert (config.vllm_mode, config.vllm_server_base_url, config.vllm_group_port) == (
        "server", "http://127.0.0.1:8011", 51999)  # fmt: skip


@pytest.mark.parametrize(
    "fields,message",
    [
        (dict(gpus=1, use_vllm=True, vllm_mode="server"), "vllm_mode server needs gpus >= 2"),
        (dict(gpus=2, vllm_mode="server"), "vllm_mode server generates with vLLM: add use_vllm"),
        (dict(gpus=0, use_vllm=True), "use_vllm generates on a GPU"),
        (dict(gpus=2.5), "gpus: 2.5 is not a whole number"),
        (dict(gpus=2, reward="repair:R_inf"), "repair:R_inf trains in one process"),
        # TRL: per_device x processes must hold whole groups; 3 x 2 = 6 is not a multiple of 4
        (dict(gpus=2, per_device_train_batch_size=3),
         r"= 6 completions per step, not a multiple of num_generations \(4\)"),
        # server mode: 3 GPUs are 2 trainers; 2 x 2 = 4 is whole, 3 x 2 = 6 is not
        (dict(gpus=3, use_vllm=True, vllm_mode="server", per_device_train_batch_size=3), "x 2 training process"),
        (dict(gpus=1, per_device_train_batch_size=2), r"x 1 training process\(es\) = 2 completions"),
    ],
)  # fmt: skip
def test_specs_trl_or_our_launch_would_reject_are_one_line(tmp_path, fields, message):
    with pytest.raises(UserError, match=message):
        spec(tmp_path, **fields)


def test_global_batch_rule_accepts_what_trl_accepts(tmp_path):
    """TRL's rule is on the global batch: 2 per device on 4 GPUs holds two groups of 4, though 2 alone would not."""
    assert spec(tmp_path, gpus=4, per_device_train_batch_size=2).training_processes == 4
    assert (
        spec(tmp_path, gpus=3, use_vllm=True, vllm_mode="server", per_device_train_batch_size=2).training_processes == 2
    )
    assert spec(tmp_path, gpus=0).training_processes == 1 and not spec(tmp_path, gpus=1).launched
    assert spec(tmp_path, gpus=0.5).training_processes == 1  # a fractional Ray request trains in one process


def test_a_spec_stored_with_num_gpus_keeps_its_gpu_request(tmp_path):
    assert spec(tmp_path, num_gpus=0).gpus == 0


@pytest.mark.slow
def test_gpus_beyond_the_visible_devices_are_refused_before_anything_starts(tmp_path, db_path):
    from backend.lab.tiny import make_tiny_checkpoint
    from backend.rl.launch import check_devices
    from backend.store import Store

    with pytest.raises(UserError, match="gpus 2 needs CUDA GPUs and this machine has none"):
        check_devices(spec(tmp_path, gpus=2), gpus=[])
    with pytest.raises(UserError, match=r"gpus 4 but 2 CUDA device\(s\) visible here \(0,1\)"):
        check_devices(spec(tmp_path, gpus=4), gpus=["0", "1"])
    assert check_devices(spec(tmp_path, gpus=2), gpus=["4", "5", "6"]) == ["4", "5"]
    base = make_tiny_checkpoint(tmp_path / "base")
    out = run_cli("rl", "--base", str(base), "--out", str(tmp_path / "out"), "--gpus", "2", "--num-generations", "2",
                  "--per-device-train-batch-size", "2", "--db", str(db_path))  # fmt: skip
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "gpus 2 needs CUDA GPUs" in out.stderr
    assert Store(db_path).count(Job) == 0


@pytest.mark.slow
def test_the_driver_stores_each_metric_and_checkpoint_once_across_a_kill_and_resume(store, tmp_path, monkeypatch):
    """The real driver runs a stand-in launch that dies after step 3 (leaving a torn checkpoint-4),
    then again: it resumes from checkpoint-2; each step's metrics and each checkpoint are stored once."""
    from backend.rl.launch import TASK, drive, plan, write_task
    from backend.rl.task import Task
    from backend.sweep.pipeline import Progress

    s = spec(tmp_path, gpus=2, steps=6, save_steps=2, save_dtype="float32")
    Path(s.output_dir).mkdir()
    task_file = Path(s.output_dir) / TASK
    write_task(task_file, Task(s, "chat", {}, []), None)
    real = plan(s, task_file, ["0", "1"], 29511, 8011)
    fake = dataclasses.replace(
        real, train_argv=[sys.executable, "-m", "tests.rl.fake_launch", str(task_file)], train_env={}
    )
    store.put([Job(id="job-1", kind="rl", status="running", experiment_id="rl-x")])
    monkeypatch.setenv("FAKE_STOP_AT", "3")
    with pytest.raises(RuntimeError, match="accelerate launch exited with status 1"):
        drive(store, s, "rl-x", fake, Progress(store, "job-1"), poll_s=0.2)
    assert {c.step for c in store.select(Checkpoint, {"experiment_id": "rl-x"})} == {2}  # not the torn 4
    monkeypatch.delenv("FAKE_STOP_AT")
    drive(store, s, "rl-x", fake, Progress(store, "job-1"), poll_s=0.2)
    rows = store.select(Metric, {"experiment_id": "rl-x"})
    assert sorted((m.step, m.name) for m in rows) == sorted((n, k) for n in range(1, 7) for k in ("loss", "attempt"))
    assert {m.step: m.value for m in rows if m.name == "attempt"} == {1: 1, 2: 1, 3: 2, 4: 2, 5: 2, 6: 2}
    trained = store.select(Checkpoint, {"experiment_id": "rl-x"})
    by_path = sorted((Path(c.path).name, c.step) for c in trained)
    assert by_path == [("checkpoint-2", 2), ("checkpoint-4", 4), ("checkpoint-6", 6), ("final", 6)]
    assert {c.reward for c in trained} == {"R_inf"}
    train = store.get(Job, "job-1").progress["train"]
    assert (train["done"], train["total"]) == (6, 6)


def test_the_metrics_tail_reads_whole_lines_only(tmp_path):
    """A line rank 0 is still writing waits for its newline; the final line is kept apart."""
    from backend.rl.follow import MetricsTail

    path = tmp_path / "metrics.jsonl"
    tail = MetricsTail(path)
    assert tail.read() == []  # no file yet
    path.write_text('{"step": 1, "values": {"loss": 0.5}}\n{"step": 2, "val')
    assert tail.read() == [(1, {"loss": 0.5})] and tail.step == 1
    with path.open("a") as f:
        f.write('ues": {"loss": 0.25}}\n{"final": 2}\n')
    assert tail.read() == [(2, {"loss": 0.25})] and (tail.step, tail.final) == (2, 2)
    assert tail.read() == []
    with path.open("a") as f:  # the disk guard's line, for the driver to raise
        f.write('{"stopped": "stopped before saving: ..."}\n')
    assert tail.read() == [] and tail.stopped == "stopped before saving: ..."


HEALTHY_SERVER = """
import http.server, sys
class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/health" else 404)
        self.end_headers()
        open(sys.argv[2], "a").write(self.path + "\\n")
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Health).serve_forever()
"""
# a trainer that asks the server, then reports its final step
TRAINER = """
import sys, urllib.request
urllib.request.urlopen(sys.argv[1] + "/health").read()
open(sys.argv[2], "a").write('{"final": 1}\\n')
"""


def _children() -> set[int]:
    import psutil

    return {p.pid for p in psutil.Process().children(recursive=True)}


@pytest.mark.slow
def test_server_mode_serves_before_training_and_stops_after(store, tmp_path, monkeypatch):
    """The driver starts the server, waits for its /health, runs the trainers, then stops the server;
    a server that never answers is stopped too, with one line."""
    from backend.rl import launch

    s = spec(tmp_path, gpus=2, use_vllm=True, vllm_mode="server", steps=1)
    out = Path(s.output_dir)
    out.mkdir()
    port, calls = launch.free_port(), tmp_path / "calls"
    url = f"http://127.0.0.1:{port}"
    the_plan = launch.Plan(
        train_argv=[sys.executable, "-c", TRAINER, url, str(out / METRICS)], train_env={},
        server_argv=[sys.executable, "-c", HEALTHY_SERVER, str(port), str(calls)], server_env={}, server_url=url,
    )  # fmt: skip
    before = _children()
    launch.drive(store, s, "rl-s", the_plan, poll_s=0.1)
    assert calls.read_text().splitlines()[-1] == "/health" and len(calls.read_text().splitlines()) >= 2
    assert _children() == before  # the server is stopped
    silent = dataclasses.replace(the_plan, server_argv=[sys.executable, "-c", "import time; time.sleep(600)"])
    monkeypatch.setattr(launch, "SERVER_START_S", 1.0)
    with pytest.raises(RuntimeError, match=f"the vLLM server at {url} did not answer /health within 1s"):
        launch.drive(store, s, "rl-s", silent, poll_s=0.1)
    assert _children() == before  # stopped, and the trainers never started


# stands in for torchrun: each rank in a session of its own, out of reach of a group kill
LAUNCHER = """
import subprocess, sys, time
rank = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
open(sys.argv[1], "w").write(str(rank.pid))
time.sleep(600)
"""
JOB = """
import sys
from pathlib import Path
from backend.rl import launch
from backend.rl.spec import RLSpec
from backend.store import Store
s = RLSpec(base="b", output_dir=sys.argv[2], gpus=2, num_generations=2, per_device_train_batch_size=2)
Path(s.output_dir).mkdir()
plan = launch.Plan([sys.executable, "-c", sys.argv[3], sys.argv[4]], {})
launch.drive(Store(sys.argv[1]), s, "rl-c", plan, poll_s=0.1)
"""


@pytest.mark.slow
def test_cancelling_the_job_stops_ranks_that_left_its_process_group(store, tmp_path):
    """`jobs cancel` TERMs the job's group; a rank started in a session of its own (as torchrun does)
    is stopped by the driver, not orphaned on its GPU."""
    import subprocess

    import psutil

    from backend.jobs import runner
    from tests.conftest import wait_until

    rank_pid = tmp_path / "rank.pid"
    job = subprocess.Popen([sys.executable, "-c", JOB, str(tmp_path / "job.duckdb"), str(tmp_path / "out"), LAUNCHER,
                            str(rank_pid)], cwd=runner.ROOT, start_new_session=True)  # fmt: skip
    store.put([Job(id="job-c", kind="rl", status="running", experiment_id="rl-c", pid=job.pid)])
    wait_until(lambda: rank_pid.is_file() and rank_pid.read_text(), timeout=120, what="the rank started")
    rank = psutil.Process(int(rank_pid.read_text()))
    assert os.getpgid(rank.pid) != os.getpgid(job.pid)  # out of the group's reach
    time.sleep(1.0)  # the driver has looked at its tree since
    assert runner.cancel(store, "job-c", grace_s=5.0).status == "cancelled"
    job.wait(timeout=30)
    wait_until(
        lambda: not rank.is_running() or rank.status() == psutil.STATUS_ZOMBIE, timeout=20, what="the rank stopped"
    )
