"""`bench/gpu_check.py --rl`, the RL half of the one GPU check, run tiny on the CPU through the same
code path, with the packages the lent device lacks made absent (tests/rl/device_env.py)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_rl_gpu_check_runs_tiny_on_cpu_without_the_store_or_ray(tmp_path):
    out = tmp_path / "gpu_check_rl.json"
    done = subprocess.run([sys.executable, "-m", "tests.rl.device_env", "bench/gpu_check.py", "--rl", "--tiny",
                           "--device", "cpu", "--out", str(out)], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out.read_text())
    errors = {k: v["error"] for k, v in report.items() if isinstance(v, dict) and "error" in v}
    assert errors == {}, errors
    rl = report["rl"]
    assert (rl["steps"], rl["n_gpu"], rl["bf16"], rl["param_dtype"]) == (2, 0, False, "torch.float32")  # CPU: fp32
    worth = report["update_worth"]
    assert worth["fp32_vs_base"]["share_differ"] > 0  # the float32 save moved
    assert 0 <= worth["bf16_save_keeps"]["update_kept_share"] < 1  # a bf16 save loses part of a 1e-6 run's update
    assert report["lora"]["final_dtype"] == "torch.float32" and report["lora"]["final_vs_base"]["share_differ"] > 0
    assert report["merge"]["identical_bytes"] and report["alpha_switch"]["per_switch_s"] > 0
    lines = [line.split(":")[0] for line in done.stdout.splitlines() if ":" in line]
    assert [n for n in lines if n in report] == ["rl", "update_worth", "lora", "merge", "alpha_switch"]
