"""Engine openai against a real server: `transformers serve` (transformers 5.24.0, its `serving` extra),
started by these tests on the lab's θ_low, one server shared by the module.

What transformers serve does, read from transformers/cli/serving/ and checked here:
- it loads a local folder given as its model (`transformers serve FOLDER`), and /v1/models lists
  that folder's path as the model id (transformers' model_manager.py:220-233, 498-523);
- a request's `seed` goes to torch.manual_seed, one process-wide generator (transformers' utils.py:1259-1260),
  before its generation is queued on one inference thread: requests one at a time (concurrency 1)
  draw exactly what their seed says, concurrent ones may take each other's seeds;
- it samples only when the checkpoint's generation config says do_sample (a request's temperature
  alone does not turn sampling on; 0 turns it off): the lab's checkpoints do not, so without a
  request's `generation_config` every sample is the greedy answer, whatever its seed;
- it ignores `n` (one choice per request) and refuses fields it does not know (422);
- its chat path parses answers with a Qwen response template for qwen2 models and, when the
  chat template lacks Qwen's assistant marker (the lab's does), returns the rendered prompt in
  front of the answer: the engine cuts it."""

import json
import sys
from pathlib import Path

import pytest

from backend.records import Experiment, Sample
from backend.rollout.openai_engine import OpenAIEngine
from backend.rollout.server_options import ServerOptions
from backend.rollout.servers import ServerProcess
from backend.rollout.spec import SamplingSpec
from backend.store import Store
from tests.conftest import ROOT, run_cli

LAB_LOW = str(ROOT / "artifacts" / "lab" / "checkpoints" / "low")
TRANSFORMERS = str(Path(sys.executable).parent / "transformers")
SERVE = f"{TRANSFORMERS} serve {{model}} --port {{port}} --host {{host}} --device cpu"
DO_SAMPLE = json.dumps({"generation_config": json.dumps({"do_sample": True})})
SLUGS = ["max-subarray", "gcd-of-array"]
PROBLEMS = [f"builtin/{s}" for s in SLUGS]
N, SEED = 4, 21
MESSAGES = [{"role": "system", "content": "Solve it."}, {"role": "user", "content": "Add two numbers."}]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def served():
    """One transformers serve on the lab's θ_low for the module (minutes to start on a busy machine)."""
    server = ServerProcess(SERVE, LAB_LOW, start_timeout_s=600, echo=False).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    from backend.problems.build import build_builtin

    path = tmp_path_factory.mktemp("serve") / "serve.duckdb"
    build_builtin(Store(path), only=SLUGS, progress=False)
    return path


def eval_cli(db, url: str, *extra: str) -> str:
    args = ["eval", "--checkpoint", LAB_LOW, "--engine", "openai", "--server-url", url, "-n", str(N), "--seed",
            str(SEED), "--temperature", "1.0", "--max-tokens", "48", "--concurrency", "1", "--extra-body", DO_SAMPLE,
            "--backend", "none", "--db", str(db)]  # fmt: skip
    for p in PROBLEMS:
        args += ["--problem", p]
    done = run_cli(*args, *extra, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    (exp,) = [e for e in Store(db).select(Experiment, newest_first=True)][:1]
    return exp.id


def engine(served, **options) -> OpenAIEngine:
    return OpenAIEngine(LAB_LOW, ServerOptions(server_url=served.url, concurrency=1, **options))


def test_eval_stores_n_samples_with_n_distinct_seeds_that_the_server_honours(served, db):
    """`eval --engine openai --server-url` on the chat path (the lab's checkpoints have a chat template)."""
    exp = eval_cli(db, served.url)
    assert Store(db).get(Experiment, exp).spec["prompt_format"] == "chat"
    samples = Store(db).select(Sample, {"experiment_id": exp})
    assert len(samples) == N * len(PROBLEMS)
    by_problem = {p: sorted((s for s in samples if s.problem_id == p), key=lambda s: s.sample_idx) for p in PROBLEMS}
    for i, p in enumerate(sorted(PROBLEMS)):  # the run's seed rule: problem i, sample k → S + i·n + k
        seeds = [next(t["seed"] for t in s.transcript if t["role"] == "assistant") for s in by_problem[p]]
        assert seeds == [SEED + i * N + k for k in range(N)]
        assert len({s.completion for s in by_problem[p]}) > 1  # sampled, not N copies of the greedy answer
    assert all(s.completion_tokens > 0 and s.prompt_tokens > 0 for s in samples)  # from `usage`
    assert all(s.finish_reason in ("stop", "length") for s in samples)
    assert not any(s.completion.startswith("<|system|>") for s in samples)  # the echoed prompt was cut
    # the seed reaches the server and decides the sample: one sample asked for again draws its text again
    first = by_problem[sorted(PROBLEMS)[0]][0]
    messages = [{"role": t["role"], "content": t["content"]} for t in first.transcript[:-1]]
    again, spec = engine(served, extra_body=DO_SAMPLE), SamplingSpec(n=1, temperature=1.0, max_tokens=48)
    assert again.request(messages, spec, SEED).text == first.completion
    assert again.request(messages, spec, SEED + 1000).text != first.completion


def test_the_plain_path_samples_through_completions(served):
    """A base checkpoint's prompt (prompts.render_plain) goes to /v1/completions: n seeds, n samples."""
    from backend.rollout.prompts import render

    prompt = render(MESSAGES, "reasoning", "plain")
    spec = SamplingSpec(n=3, temperature=1.0, max_tokens=24, seed=9)
    (out,) = engine(served, extra_body=DO_SAMPLE).generate([prompt], spec)
    assert [c.seed for c in out] == [9, 10, 11] and len({c.text for c in out}) == 3
    assert all(c.prompt_tokens > 0 and 0 < c.completion_tokens <= 24 for c in out)
    assert engine(served, extra_body=DO_SAMPLE).request(prompt, spec, 10).text == out[1].text


def test_without_do_sample_it_decodes_greedily_whatever_the_seed(served):
    """What is true of transformers serve on a checkpoint whose generation config does not sample."""
    out = engine(served).generate([MESSAGES], SamplingSpec(n=3, temperature=1.0, max_tokens=24, seed=5))
    assert [c.seed for c in out[0]] == [5, 6, 7] and len({c.text for c in out[0]}) == 1
