"""Tiny real checkpoints for tests and benchmarks: a BPE tokenizer trained here with `tokenizers`
and a randomly initialised Qwen2 model saved as safetensors that transformers loads."""

from __future__ import annotations

from pathlib import Path

import torch

SPECIAL = ["<|endoftext|>", "<|pad|>"]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


def train_tokenizer(texts: list[str], vocab_size: int = 512):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(texts, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=SPECIAL[0], pad_token=SPECIAL[1])
    fast.chat_template = CHAT_TEMPLATE
    return fast


def tiny_qwen2(tokenizer, seed: int = 0, hidden: int = 64, layers: int = 2, heads: int = 4, kv_heads: int = 2):
    """A randomly initialised Qwen2 decoder sized for a CPU, with tied embeddings."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        max_position_embeddings=2048,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    return Qwen2ForCausalLM(config)


def make_tiny_checkpoint(
    folder: str | Path, texts: list[str] | None = None, seed: int = 0, hidden: int = 64, layers: int = 2
):
    texts = (
        texts
        or [
            "print(sum(map(int, input().split())))",
            "```python\nn = int(input())\nprint(n * 2)\n```",
            "def solve():\n    return 0\n",
            "<tool_call>{}</tool_call> <bash>ls</bash> <submit>a.py</submit>",
        ]
        * 20
    )
    tokenizer = train_tokenizer(texts)
    model = tiny_qwen2(tokenizer, seed, hidden, layers)
    folder = Path(folder)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
