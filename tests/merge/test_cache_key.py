"""The merge cache serves a merged folder only while everything it copied from its endpoints is
unchanged (issue #46, item 5). Before: the key hashed config.json and the safetensors only, so a
merge cached before the endpoints gained a chat template was reused without one, and a vLLM disk
sweep failed with "Cannot use chat template functions because tokenizer.chat_template is not set"."""

import json
from pathlib import Path

import pytest

from backend.errors import UserError
from backend.lab.tiny import make_tiny_checkpoint
from backend.merge.cache import MergeCache
from backend.merge.spec import Merge
from backend.problems.build import build_builtin
from backend.records import Job
from backend.specs import validate_spec
from backend.store import Store
from backend.sweep.spec import SweepSpec
from tests.rollout import vllm_standin


@pytest.fixture
def endpoints(tmp_path):
    """Two tiny checkpoints without a chat template, as base models ship; returns (low, high, template)."""
    low, high = (make_tiny_checkpoint(tmp_path / name, seed=seed) for name, seed in (("low", 1), ("high", 2)))
    template = (low / "chat_template.jinja").read_text()
    for folder in (low, high):
        (folder / "chat_template.jinja").unlink()
    return str(low), str(high), template


def test_a_changed_chat_template_is_a_new_merge(endpoints, tmp_path):
    low, high, template = endpoints
    cache = MergeCache(tmp_path / "cache")
    spec = Merge.at_alpha(low, high, 1.5)
    (first,) = cache.get([spec], progress=False)
    assert cache.get([spec], progress=False) == [first]  # nothing changed: served from the cache
    for folder in (low, high):
        (Path(folder) / "chat_template.jinja").write_text(template)
    (second,) = cache.get([spec], progress=False)
    assert second != first and (second / "chat_template.jinja").read_text() == template
    assert not (first / "chat_template.jinja").exists()  # the old merge stays as it was made
    (Path(low) / "generation_config.json").write_text('{"temperature": 0.6}')  # any copied file counts
    (third,) = cache.get([spec], progress=False)
    assert third not in (first, second) and (third / "generation_config.json").read_text() == '{"temperature": 0.6}'


def test_named_chat_templates_are_copied_and_keyed(endpoints, tmp_path):
    """transformers loads additional_chat_templates/NAME.jinja with the tokenizer (tokenizer.chat_template
    becomes a dict; a call with tools picks "tool_use"): a merge copies them, a changed one is a new
    merge, and endpoints whose named templates differ are different tokenizers."""
    from transformers import AutoTokenizer

    low, high, template = endpoints
    for folder in (low, high):
        (Path(folder) / "chat_template.jinja").write_text(template)
        (Path(folder) / "additional_chat_templates").mkdir()
        (Path(folder) / "additional_chat_templates" / "tool_use.jinja").write_text("{{ 'tools' }}")
    cache = MergeCache(tmp_path / "cache")
    (first,) = cache.get([Merge.at_alpha(low, high, 0.5)], progress=False)
    assert AutoTokenizer.from_pretrained(first).chat_template == {"default": template, "tool_use": "{{ 'tools' }}"}
    (Path(high) / "additional_chat_templates" / "tool_use.jinja").write_text("{{ 'other' }}")
    with pytest.raises(UserError, match=r"different tokenizers \(chat template\)"):
        validate_spec(SweepSpec, {"low": low, "high": high, "alphas": "0,1"})
    (Path(low) / "additional_chat_templates" / "tool_use.jinja").write_text("{{ 'other' }}")
    (second,) = cache.get([Merge.at_alpha(low, high, 0.5)], progress=False)
    assert second != first and (second / "additional_chat_templates" / "tool_use.jinja").read_text() == "{{ 'other' }}"


def test_a_legacy_chat_template_json_is_copied(endpoints, tmp_path):
    """An endpoint whose template is a chat_template.json (the processors' legacy file, which
    has_chat_template counts): its merges carry it too, so they prompt in the format chosen for it."""
    from backend.rollout.prompts import has_chat_template

    low, high, template = endpoints
    for folder in (low, high):
        (Path(folder) / "chat_template.json").write_text(json.dumps({"chat_template": template}))
    (merged,) = MergeCache(tmp_path / "cache").get([Merge.at_alpha(low, high, 0.5)], progress=False)
    assert json.loads((merged / "chat_template.json").read_text()) == {"chat_template": template}
    assert has_chat_template(merged)


@pytest.mark.slow
def test_a_vllm_disk_sweep_after_the_endpoints_gained_a_template(endpoints, tmp_path, monkeypatch):
    """The review's failure, end to end through jobs and the vLLM stand-in: two sweeps, only the
    chat template changed between them; the second one prompts with the template (auto: chat)."""
    from backend.jobs import runner

    low, high, template = endpoints
    monkeypatch.setenv("FLAB_CACHE", str(tmp_path / "flab"))
    store = Store(tmp_path / "jobs.duckdb")
    build_builtin(store, only=["max-subarray"], progress=False)
    fields = {"low": low, "high": high, "alphas": "0.5", "problems": ["builtin/max-subarray"], "n": 1,
              "max_tokens": 16, "engine": "vllm"}  # fmt: skip
    merged = []
    for with_template in (False, True):
        if with_template:
            for folder in (low, high):
                (Path(folder) / "chat_template.jinja").write_text(template)
        vllm_standin.install(monkeypatch)
        job = runner.create_job(store, validate_spec(SweepSpec, fields))
        runner.run_job_here(store, job.id)
        assert store.get(Job, job.id).status == "done", store.get(Job, job.id).error
        calls = [e[1] for e in vllm_standin.EVENTS if e[0] == "call"]
        assert calls == (["chat"] if with_template else ["generate"])
        (model,) = [e[2] for e in vllm_standin.EVENTS if e[0] == "start"]  # the α = 0.5 merged folder served
        merged.append(Path(model))
    assert merged[0] != merged[1]  # a new merge, not the cached one
    assert not (merged[0] / "chat_template.jinja").exists()
    assert (merged[1] / "chat_template.jinja").read_text() == template  # the endpoints' new file, copied


def test_a_sweep_refuses_endpoints_whose_tokenizers_differ_in_one_line(endpoints):
    low, high, template = endpoints
    (Path(high) / "chat_template.jinja").write_text(template)
    with pytest.raises(UserError) as refused:
        validate_spec(SweepSpec, {"low": low, "high": high, "alphas": "0,1"})
    line = str(refused.value)
    assert "\n" not in line and "different tokenizers (chat template)" in line
    (Path(low) / "chat_template.jinja").write_text(template)
    validate_spec(SweepSpec, {"low": low, "high": high, "alphas": "0,1"})  # the same files: accepted
