"""What a user's Ray cluster gets from the driver and what the driver says back, without a cluster:
the declared list of variables the project reads (backend/sweep/cluster_env.py) against every
variable the code reads, the token as Ray's own loader finds it, Ray's causes in one line, and the
preflight's refusals for rows as nodes report them."""

import re
from pathlib import Path

import pytest

from backend.errors import UserError
from backend.sweep import cluster_env

ROOT = Path(__file__).resolve().parents[2]
READ = re.compile(r"""(?:environ(?:\.get)?\(?\[?|getenv\(|envvar=)\s*["']([A-Z][A-Z0-9_]+)["']""")


def read_in(folder: Path) -> dict[str, str]:
    """Every environment variable the Python code under `folder` reads by name → a file reading it."""
    found = {}
    for path in sorted(folder.rglob("*.py")):
        for name in READ.findall(path.read_text()):
            found.setdefault(name, str(path.relative_to(folder)))
    return found


def undeclared(found: dict[str, str]) -> dict[str, str]:
    declared = set(cluster_env.STAY_HERE) | set(cluster_env.OTHERS)
    return {name: where for name, where in found.items() if not cluster_env.shipped(name) and name not in declared}


def test_every_variable_the_project_reads_is_declared_shipped_or_kept_here(tmp_path):
    found = read_in(ROOT / "backend")
    assert {"FLAB_MERGE_CACHE_GB", "FLAB_CACHE", "FLAB_JUDGE_MEMORY_SHARE", "FLAB_SANDBOX_IMAGE"} <= set(found)
    assert undeclared(found) == {}
    # the rule can fail: a variable of no declared family is found
    (tmp_path / "x.py").write_text('import os\nos.environ.get("NEW_SETTING")\n')
    assert undeclared(read_in(tmp_path)) == {"NEW_SETTING": "x.py"}


def test_what_goes_with_a_job_to_the_cluster():
    driver = {"FLAB_MERGE_CACHE_GB": "7", "FLAB_CGROUPS": "v2", "HF_HOME": "/h", "HF_HUB_OFFLINE": "1",
              "VLLM_USE_V1": "1", "CUDA_LAUNCH_BLOCKING": "1", "CUDA_VISIBLE_DEVICES": "0,1", "FLAB_DB": "/x.duckdb",
              "FLAB_TOKEN": "s", "HF_TOKEN": "hf_s", "FLAB_CGROUP_PARENT": "/sys/fs/cgroup/x", "HOME": "/root",
              "PATH": "/usr/bin", "RAY_ADDRESS": "auto"}  # fmt: skip
    assert cluster_env.shipped_env(driver) == {"CUDA_LAUNCH_BLOCKING": "1", "FLAB_CGROUPS": "v2",
                                               "FLAB_MERGE_CACHE_GB": "7", "HF_HOME": "/h", "HF_HUB_OFFLINE": "1",
                                               "VLLM_USE_V1": "1"}  # fmt: skip
    from backend.sweep.ray_join import shipped_code

    env = shipped_code({"env_vars": {"FLAB_X": "mine"}})
    assert env["working_dir"] == str(ROOT) and env["env_vars"]["FLAB_X"] == "mine"


@pytest.fixture
def ray_loader():
    """Ray's own token loader (its C++ singleton), its cache emptied before and after."""
    from ray._raylet import AuthenticationTokenLoader

    loader = AuthenticationTokenLoader.instance()
    loader.reset_cache()
    yield loader
    loader.reset_cache()


def test_the_token_is_the_one_ray_finds(ray_loader, tmp_path, monkeypatch):
    from backend.sweep.ray_auth import local_token

    for name in ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert local_token() == (None, str(tmp_path / ".ray" / "auth_token"))
    assert ray_loader.get_raw_token(ignore_auth_mode=True) == ""
    (tmp_path / ".ray").mkdir()
    (tmp_path / ".ray" / "auth_token").write_text("  home-token \nsecond line\n")
    (tmp_path / "other").write_text("path-token\n")
    cases = [({}, ("home-token", str(tmp_path / ".ray" / "auth_token"))),
             ({"RAY_AUTH_TOKEN_PATH": str(tmp_path / "other")},
              ("path-token", f"RAY_AUTH_TOKEN_PATH={tmp_path}/other")),
             ({"RAY_AUTH_TOKEN_PATH": str(tmp_path / "other"), "RAY_AUTH_TOKEN": " env-token "},
              ("env-token", "RAY_AUTH_TOKEN"))]  # fmt: skip
    for env, expected in cases:
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        ray_loader.reset_cache()
        assert local_token() == expected
        assert ray_loader.get_raw_token(ignore_auth_mode=True) == expected[0]  # Ray's order, Ray's trimming


def test_rays_causes_in_one_line():
    from ray.core.generated.common_pb2 import ActorDiedErrorContext
    from ray.exceptions import ActorDiedError, RayTaskError

    from backend.sweep.ray_errors import cause

    killed = ActorDiedError(ActorDiedErrorContext(
        error_message="The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR",
        class_name="EngineActor", actor_id=bytes(16), pid=4242, node_ip_address="10.0.0.7"))  # fmt: skip
    assert cause(killed) == (
        "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR (pid 4242 on 10.0.0.7)"
    )
    cancelled = ActorDiedError(ActorDiedErrorContext(
        error_message="The actor is dead because all references to the actor were removed including lineage ref "
        "count.", class_name="EngineActor", actor_id=bytes(16), never_started=True))  # fmt: skip
    assert cause(cancelled) == (
        "The actor is dead because all references to the actor were removed including lineage ref count. "
        "The actor never ran - it was cancelled before it started running."
    )
    raised = RayTaskError("EngineActor.rollout", "Traceback …\nValueError: Free memory on device cuda:0 …",
                          ValueError("Free memory on device cuda:0 (1.0/80 GiB) on startup is less than desired"),
                          pid=7, ip="10.0.0.7")  # fmt: skip
    assert cause(raised) == (
        "EngineActor.rollout raised ValueError: "
        "Free memory on device cuda:0 (1.0/80 GiB) on startup is less than desired"
    )
    init = ActorDiedError(RayTaskError("EngineActor.__init__", "Traceback (most recent call last):\n  File …\n"
                                       "RuntimeError: Engine core initialization failed. See root cause above.",
                                       RuntimeError("x"), pid=7, ip="10.0.0.7"))  # fmt: skip
    assert (
        cause(init)
        == "the actor's __init__ raised RuntimeError: Engine core initialization failed. See root cause above."
    )


def node_row(**kw) -> dict:
    row = {"host": "gpu-3", "bwrap": "/usr/bin/bwrap", "sandbox_python": True, "g++": "/usr/bin/g++",
           "cache": "/shared/merges", "budget_gb": 100.0, "free": 2 * 10**12, "seen": {"/ckpt": [("a", 1)]},
           "packages": {"torch": "2.13.0"}, "missing": {},
           "node": {"NodeManagerAddress": "10.0.0.9", "NodeID": "abcdef0123456789",
                    "Resources": {"CPU": 8, "GPU": 2}}}  # fmt: skip
    return row | kw


@pytest.mark.parametrize(
    ("row", "backend", "engine", "said"),
    [
        (node_row(), "bwrap", "vllm", None),
        (node_row(missing={"torch": "ModuleNotFoundError: No module named 'torch'"}), "bwrap", "auto",
         "Ray node 10.0.0.9 (abcdef01) cannot import torch (ModuleNotFoundError: No module named 'torch'); install"),
        (node_row(missing={"vllm": "ModuleNotFoundError: No module named 'vllm'"}), "bwrap", "auto", None),
        (node_row(missing={"vllm": "ImportError: libcudart.so.12"}), "bwrap", "vllm",
         "Ray node 10.0.0.9 (abcdef01) cannot import vllm (ImportError: libcudart.so.12); install"),
        (node_row(bwrap=None), "bwrap", "auto", "Ray node 10.0.0.9 (abcdef01) has no bubblewrap for the sandbox"),
        (node_row(bwrap=None), "docker", "auto", None),
        (node_row(seen={"/ckpt": None}), "bwrap", "auto",
         "/ckpt is not the same folder on Ray node 10.0.0.9 (abcdef01) as on this machine; put it on a filesystem"),
    ],
)  # fmt: skip
def test_a_node_that_cannot_serve_is_refused_naming_it(row, backend, engine, said):
    from backend.sweep.preflight import refuse, table

    expected = {"/ckpt": [("a", 1)]}
    if said is None:
        refuse(row, ["/ckpt"], expected, {}, backend, engine)
    else:
        with pytest.raises(UserError) as err:
            refuse(row, ["/ckpt"], expected, {}, backend, engine)
        assert str(err.value).startswith(said) and "\n" not in str(err.value), str(err.value)
    lines = table([row], ["/ckpt"], expected).splitlines()
    assert lines[0] == "Ray preflight, 1 node(s):" and lines[2].startswith("10.0.0.9 (abcdef01)  gpu-3  8     2 ")
