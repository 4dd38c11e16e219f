"""Tiny real checkpoints (transformers Qwen2 and Llama), single-file and sharded."""

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

ARCHS = {
    "qwen2": (Qwen2Config, Qwen2ForCausalLM),
    "llama": (LlamaConfig, LlamaForCausalLM),
}


def make_checkpoint(folder, arch="qwen2", seed=0, dtype=torch.bfloat16, sharded=False, tie=False, **overrides):
    config_cls, model_cls = ARCHS[arch]
    sizes = {"vocab_size": 96, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
             "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64}  # fmt: skip
    config = config_cls(**{**sizes, **overrides}, tie_word_embeddings=tie)
    torch.manual_seed(seed)
    model = model_cls(config)
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0, 0.5)  # far from init, so endpoints really differ
    model = model.to(dtype)
    model.save_pretrained(folder, max_shard_size="40KB" if sharded else "5GB")
    return folder


@pytest.fixture
def pair(tmp_path):
    """make(arch, sharded, dtype) -> (low, high) folders."""

    def make(arch="qwen2", sharded=False, dtype=torch.bfloat16, tie=False):
        low = make_checkpoint(tmp_path / f"{arch}-low", arch, 1, dtype, sharded, tie)
        high = make_checkpoint(tmp_path / f"{arch}-high", arch, 2, dtype, sharded, tie)
        return low, high

    return make
