"""Fixtures of the vLLM stand-in's tests."""

import pytest
import torch
from transformers import AutoModelForCausalLM

from backend.lab.tiny import make_tiny_checkpoint
from tests.rollout import vllm_standin


@pytest.fixture
def vllm(monkeypatch):
    return vllm_standin.install(monkeypatch)


@pytest.fixture(scope="module")
def bf16_pair(tmp_path_factory):
    """Two tiny Qwen2 checkpoints in bf16, with a tokenizer and chat template."""
    root = tmp_path_factory.mktemp("vllm-pair")
    out = []
    for name, seed in (("low", 1), ("high", 2)):
        folder = make_tiny_checkpoint(root / name, seed=seed)
        model = AutoModelForCausalLM.from_pretrained(folder)
        with torch.no_grad():
            for p in model.parameters():
                p.normal_(0, 0.5)  # far apart, so the endpoints really differ
        model.to(torch.bfloat16).save_pretrained(folder)
        out.append(str(folder))
    return tuple(out)
