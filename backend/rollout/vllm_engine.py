"""vLLM engine. GPU only, imported lazily. NOT TESTED HERE: vLLM cannot run on this project's
machines; written against vLLM's documented offline API (LLM.chat, SamplingParams)."""

from __future__ import annotations

import time

from backend.rollout.spec import Completion, SamplingSpec


class VLLMEngine:
    def __init__(self, checkpoint: str, *, enable_alpha_switch: bool = False, **llm_kw):
        from vllm import LLM

        if enable_alpha_switch:  # workers gain the α-switch methods (backend/merge/live_vllm.py)
            llm_kw.setdefault("worker_extension_cls", "backend.merge.live_vllm.AlphaSwitchExtension")
        self.llm = LLM(model=checkpoint, enable_prefix_caching=True, **llm_kw)
        self.checkpoint = checkpoint

    def alpha_switch(self, low: str, high: str):
        """In-place θ_α = θ_low + α·Δ inside the running engine; resets the prefix cache on switch."""
        from backend.merge.live_vllm import VLLMAlphaSwitch

        return VLLMAlphaSwitch(self.llm, low, high)

    def generate(self, conversations: list[list[dict]], spec: SamplingSpec) -> list[list[Completion]]:
        from vllm import SamplingParams

        params = SamplingParams(
            n=spec.n, temperature=spec.temperature, top_p=spec.top_p, max_tokens=spec.max_tokens,
            seed=spec.seed, stop=list(spec.stop) or None, include_stop_str_in_output=True,
        )  # fmt: skip
        began = time.perf_counter()
        outputs = self.llm.chat(conversations, params, use_tqdm=True)  # everything in one call
        latency = time.perf_counter() - began
        return [
            [
                Completion(
                    o.text,
                    len(req.prompt_token_ids),
                    len(o.token_ids),
                    "length" if o.finish_reason == "length" else "stop",
                    latency,
                )
                for o in req.outputs
            ]
            for req in outputs
        ]
