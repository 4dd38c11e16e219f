"""Generation engines behind one interface: generate(conversations, SamplingSpec) -> completions.

TransformersEngine runs anywhere (CPU here); VLLMEngine (vllm_engine.py) is GPU-only and imported
lazily. `make_engine("auto", ...)` picks vLLM when CUDA and vllm are present, transformers otherwise.
"""

from __future__ import annotations

import importlib.util
import time
from typing import Protocol

import torch

from backend.errors import UserError
from backend.rollout.spec import Completion, SamplingSpec
from backend.vocab import ENGINES


class Engine(Protocol):
    def generate(self, conversations: list[list[dict]], spec: SamplingSpec) -> list[list[Completion]]:
        """For each conversation, spec.n completions of the next assistant turn."""

    def alpha_switch(self, low: str, high: str):
        """A switcher whose set_alpha(α) puts θ_α = (1−α)·θ_low + α·θ_high into the loaded model."""


class TransformersEngine:
    """Batched sampling with left padding and the KV cache (transformers' generate)."""

    def __init__(
        self, checkpoint: str, device: str | None = None, batch_size: int = 64, dtype: torch.dtype | None = None
    ):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(checkpoint)
            self.model = AutoModelForCausalLM.from_pretrained(checkpoint, dtype=dtype or "auto").to(self.device).eval()
        except (OSError, ValueError) as exc:
            raise UserError(f"cannot load checkpoint {checkpoint}: {str(exc).splitlines()[0]}") from exc
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.batch_size = batch_size

    def alpha_switch(self, low: str, high: str):
        from backend.merge.live import LiveAlphaSwitch

        return LiveAlphaSwitch(self.model, low, high)

    def render(self, conversation: list[dict]) -> str:
        # the one prompt format, as vLLM and TRL use it (jobs refuse checkpoints without a template)
        return self.tokenizer.apply_chat_template(conversation, tokenize=False, add_generation_prompt=True)

    @torch.no_grad()
    def generate(self, conversations: list[list[dict]], spec: SamplingSpec) -> list[list[Completion]]:
        prompts = [self.render(c) for c in conversations]
        out: list[list[Completion]] = []
        torch.manual_seed(spec.seed)  # the same call with the same seed gives the same text
        per_batch = max(1, self.batch_size // spec.n)
        for start in range(0, len(prompts), per_batch):
            out += self._batch(prompts[start : start + per_batch], spec)
        return out

    def _batch(self, prompts: list[str], spec: SamplingSpec) -> list[list[Completion]]:
        enc = self.tokenizer(prompts, return_tensors="pt", padding=True).to(self.device)
        sampling = spec.temperature > 0
        copies = spec.n if sampling else 1  # greedy decoding gives one answer: generate it once
        began = time.perf_counter()
        generated = self.model.generate(
            **enc, do_sample=sampling, temperature=spec.temperature if sampling else None,
            top_p=spec.top_p if sampling else None, top_k=None, max_new_tokens=spec.max_tokens,
            num_return_sequences=copies, pad_token_id=self.tokenizer.pad_token_id,
            eos_token_id=self.tokenizer.eos_token_id,
        )  # fmt: skip
        latency = time.perf_counter() - began
        width = enc["input_ids"].shape[1]
        prompt_lens = enc["attention_mask"].sum(dim=1).tolist()
        results = []
        for i, row in enumerate(generated[:, width:].tolist()):
            results.append(self._completion(row, prompt_lens[i // copies], spec, latency))
        return [[results[p * copies + (k % copies)] for k in range(spec.n)] for p in range(len(prompts))]

    def _completion(self, tokens: list[int], prompt_tokens: int, spec: SamplingSpec, latency: float) -> Completion:
        eos = self.tokenizer.eos_token_id
        finish = "length"
        if eos in tokens:
            tokens = tokens[: tokens.index(eos)]
            finish = "stop"
        text = self.tokenizer.decode(tokens, skip_special_tokens=True)
        for stop in spec.stop:  # stop strings end the turn; the stop string itself is kept
            cut = text.find(stop)
            if cut >= 0:
                text = text[: cut + len(stop)]
                tokens = self.tokenizer(text, add_special_tokens=False)["input_ids"]
                finish = "stop"
                break
        return Completion(text, int(prompt_tokens), len(tokens), finish, latency)


def make_engine(name: str, checkpoint: str, *, alpha_switch: bool = False, **kw) -> Engine:
    """`alpha_switch`: the engine will be asked for `alpha_switch(low, high)` (vLLM builds its
    workers with the switch extension for it)."""
    if name not in ENGINES:
        raise UserError(f"unknown engine {name!r}; choose one of {', '.join(ENGINES)}")
    has_vllm = torch.cuda.is_available() and importlib.util.find_spec("vllm") is not None
    if name == "vllm" and not has_vllm:
        raise UserError("--engine vllm needs a CUDA GPU and `pip install -r requirements-gpu.txt`")
    if name == "vllm" or (name == "auto" and has_vllm):
        from backend.rollout.vllm_engine import VLLMEngine

        return VLLMEngine(checkpoint, enable_alpha_switch=alpha_switch, **kw)
    return TransformersEngine(checkpoint, **kw)
