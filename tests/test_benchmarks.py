"""The analysis benchmark runs in CI at smoke size (its figures are printed, never asserted: timing is not
a test; the 5 M-row figures in docs/benchmarks.md come from a run without --smoke)."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_analysis_benchmark_runs(tmp_path):
    out = subprocess.run(
        [sys.executable, "bench/analysis_speed.py", "--smoke", "--db", str(tmp_path / "bench.duckdb")],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    print(out.stdout)
    assert "SYNTHETIC data: 20 checkpoints x 60 problems x 20 samples = 24,000 rows" in out.stdout
    assert re.search(r"ratio \(pandas / ours\), total: [\d.]+x", out.stdout)


@pytest.mark.slow
def test_gpu_check_script_runs_tiny_on_cpu(tmp_path):
    """bench/gpu_check.py is the one GPU check; its tiny CPU run proves the script itself works
    (figures are printed, never asserted). The CUDA merge must write the same bytes as the CPU one."""
    import json

    out = tmp_path / "gpu_check.json"
    done = subprocess.run([sys.executable, "bench/gpu_check.py", "--tiny", "--device", "cpu", "--out", str(out)],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(out.read_text())
    assert all("error" not in report[k] for k in ("merge", "rollouts", "alpha_switch", "rl")), report
    assert report["merge"]["identical_bytes"] is True and report["rollouts"]["tokens"] > 0
    assert report["rl"]["steps"] == 1 and len(report["rl"]["reward_mean_logged"]) == 1
    assert "skipped" in report["vllm"]  # no vLLM here: said, not faked


@pytest.mark.slow
def test_gpu_check_vllm_part_through_the_standin(tmp_path, monkeypatch):
    """The vLLM part of bench/gpu_check.py, run through the vLLM stand-in with vLLM's msgpack rule
    on (collective_rpc of a Python function, which the script once sent, is refused): switched
    weights equal a merged folder's, bit for bit, and the engines run one after another on one device."""
    import importlib.util
    import os

    from tests.rollout import vllm_standin

    vllm_standin.install(monkeypatch)
    assert not vllm_standin.insecure_serialization() and "VLLM_ALLOW_INSECURE_SERIALIZATION" not in os.environ
    loader = importlib.util.spec_from_file_location("gpu_check", ROOT / "bench" / "gpu_check.py")
    gpu_check = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(gpu_check)
    low, high, _ = gpu_check.build_pair(tmp_path, gpu_check.TINY)
    report = gpu_check.check_vllm(low, high, tmp_path)
    assert report["identical_to_merged_folder"] == {"-0.5": True, "0.5": True, "1.5": True}
    assert report["engines_in_a_row"] == 4 and report["tokens"] > 0
    assert vllm_standin.DEVICE.free == vllm_standin.DEVICE.total  # every engine gave its share back
    rpcs = [e[1] for e in vllm_standin.EVENTS if e[0] == "rpc"]
    assert rpcs.count("flab_weights_digest") == 6 and all(isinstance(m, str) for m in rpcs)
