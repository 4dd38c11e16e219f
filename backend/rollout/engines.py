"""Generation engines behind one interface: generate(conversations, SamplingSpec) -> completions.

TransformersEngine runs anywhere (CPU here); VLLMEngine (vllm_engine.py) is GPU-only and imported
lazily; OpenAIEngine (openai_engine.py) samples from an OpenAI-compatible server. `make_engine("auto",
...)` picks vLLM when CUDA and vllm are present, transformers otherwise.
"""

from __future__ import annotations

import importlib.util
import time
from typing import Protocol

import torch

from backend.errors import UserError
from backend.rollout.spec import Completion, SamplingSpec
from backend.vocab import ENGINES

Prompt = list[dict] | str  # messages (rendered with the chat template) or a plain prompt (prompts.render)


class Engine(Protocol):
    def generate(
        self, prompts: list[Prompt], spec: SamplingSpec, seeds: list[int] | None = None
    ) -> list[list[Completion]]:
        """For each prompt, spec.n completions of the next assistant turn. seeds[i]: the seed of
        prompt i's first sample (its k-th uses seeds[i] + k); default spec.seed + i·spec.n."""

    def alpha_switch(self, low: str, high: str):
        """A switcher whose set_alpha(α) puts θ_α = (1−α)·θ_low + α·θ_high into the loaded model."""

    def close(self) -> None:
        """Release the model and its device memory; the engine is unusable afterwards."""


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

    def close(self) -> None:
        self.model = None
        if self.device == "cuda":
            torch.cuda.empty_cache()

    def render(self, prompt: Prompt) -> str:
        """Messages through the chat template (as vLLM's chat and TRL do); a plain prompt as it is."""
        if isinstance(prompt, str):
            return prompt
        return self.tokenizer.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)

    @torch.no_grad()
    def generate(
        self, prompts: list[Prompt], spec: SamplingSpec, seeds: list[int] | None = None
    ) -> list[list[Completion]]:
        prompts = [self.render(p) for p in prompts]
        out: list[list[Completion]] = []
        # one generator for the call (transformers samples a batch from one stream): the same call
        # with the same seeds gives the same text
        torch.manual_seed(seeds[0] if seeds else spec.seed)
        per_batch = max(1, self.batch_size // spec.n)
        for start in range(0, len(prompts), per_batch):
            out += self._batch(prompts[start : start + per_batch], spec)
        return out

    def _batch(self, prompts: list[str], spec: SamplingSpec) -> list[list[Completion]]:
        enc = self.tokenizer(prompts, return_tensors="pt", padding=True).to(self.device)
        sampling = not spec.greedy
        copies = spec.n if sampling else 1  # greedy decoding gives one answer: generate it once
        began = time.perf_counter()
        generated = self.model.generate(
            **enc,
            do_sample=sampling,
            temperature=spec.temperature if sampling else None,
            top_p=spec.top_p if sampling else None,
            top_k=None,
            max_new_tokens=spec.max_tokens,
            num_return_sequences=copies,
            pad_token_id=self.tokenizer.pad_token_id,
            eos_token_id=self.tokenizer.eos_token_id,
        )
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


def uses_vllm(name: str) -> bool:
    """Whether engine `name` means vLLM here (auto: when CUDA and vllm are both present)."""
    if name not in ENGINES:
        raise UserError(f"unknown engine {name!r}; choose one of {', '.join(ENGINES)}")
    has_vllm = torch.cuda.is_available() and importlib.util.find_spec("vllm") is not None
    if name == "vllm" and not has_vllm:
        raise UserError("--engine vllm needs a CUDA GPU and `pip install -r requirements-gpu.txt`")
    return name == "vllm" or (name == "auto" and has_vllm)


def make_engine(name: str, checkpoint: str, *, alpha_switch: tuple[str, str] | None = None, **kw) -> Engine:
    """`alpha_switch` (low, high): the engine will be asked for `alpha_switch(low, high)` (vLLM
    builds its workers with the switch extension and plans device memory for the endpoints)."""
    if name == "openai":  # a server's weights: no α switch, no endpoints to plan for
        from backend.rollout.openai_engine import OpenAIEngine

        kw.pop("switch_endpoints", None)
        return OpenAIEngine(checkpoint, **kw)
    if uses_vllm(name):
        from backend.rollout.vllm_engine import VLLMEngine

        return VLLMEngine(checkpoint, alpha_switch=alpha_switch, **kw)
    kw.pop("switch_endpoints", None)  # transformers keeps θ_low and θ_high where its model is
    return TransformersEngine(checkpoint, **kw)
