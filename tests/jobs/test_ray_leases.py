"""GPU leases on the Ray path (issue #58): a Ray sweep on this node's local cluster takes only the
GPUs no local job holds. The node has 4 fake GPUs (CUDA_VISIBLE_DEVICES=0,1,2,3 and Ray's
RAY_OVERRIDE_RESOURCES, which Ray only counts); another process holds GPU 0's lease through the
same lease files a local job takes (backend/gpus.py); the sweep's engines must run on 1-3 only."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from backend.jobs import runner
from tests.jobs.conftest import finished, sweep, wait_for

pytestmark = pytest.mark.slow  # a real Ray local cluster of three actors, in the job's own process

ROOT = Path(__file__).resolve().parents[2]

HOLD = """
import sys, time
from pathlib import Path
from backend.gpus import lease_gpus
lease = lease_gpus(Path(sys.argv[1]), 1, wait=False, label="holder", pool=["0", "1", "2", "3"])
print(",".join(lease.gpus), flush=True)
sys.stdin.read()  # held until the test closes stdin
"""


def test_a_ray_sweep_beside_a_job_holding_gpu_0_runs_its_engines_on_1_to_3(endpoints, jobs_db, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1,2,3")
    monkeypatch.setenv("RAY_OVERRIDE_RESOURCES", json.dumps({"CPU": 2, "GPU": 4}))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    leases = runner._leases(jobs_db)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(leases)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
    )
    try:
        assert holder.stdout.readline().strip() == "0"
        job = runner.create_job(jobs_db, sweep(endpoints, executor="ray", engine="transformers"))
        runner.start(jobs_db, job.id, detach=True)
        job = wait_for(jobs_db, job.id, finished, timeout=900)
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    assert job.status == "done", job.error
    actors = job.progress["actors"]
    assert len(actors) == 3  # one per free GPU (3 α points)
    assert sorted(g for a in actors.values() for g in a["gpus"]) == ["1", "2", "3"]
    assert "GPU(s) 1,2,3 leased" in Path(job.log_path).read_text()
