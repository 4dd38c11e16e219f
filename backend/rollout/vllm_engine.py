"""vLLM engine. GPU only, imported lazily. Not run here (vLLM cannot run on this project's
machines): written against vLLM 0.31.0's offline API (LLM.chat, SamplingParams, collective_rpc,
reset_prefix_cache) and tested through a strict stand-in of it (tests/rollout/test_vllm_contract.py).

Sampling matches the spec:
- every conversation gets its own SamplingParams with a seed derived from (spec seed,
  conversation index): vLLM seeds each request on its own, so the n copies of a conversation in
  the tool and agentic settings, or identical prompts in one call, would otherwise come out the same;
- greedy decoding with n > 1 (which vLLM refuses) is one request with n = 1, copied n times;
- a prompt that does not fit max_model_len becomes that sample's format failure
  ("prompt_too_long"), not a failed batch.
"""

from __future__ import annotations

import logging
import time

from backend.rollout.spec import Completion, SamplingSpec

log = logging.getLogger(__name__)
SWITCH_GPU_MEMORY_UTILIZATION = 0.80  # vLLM's default is 0.92; θ_low and θ_high need room beside it
SEED_STRIDE = 1_000_003  # a prime: seeds of (spec seed, index) pairs do not collide for indices < stride


def request_seed(spec_seed: int, index: int) -> int:
    return (spec_seed * SEED_STRIDE + index) % (2**31 - 1)


class VLLMEngine:
    def __init__(self, checkpoint: str, *, enable_alpha_switch: bool = False, **llm_kw):
        from vllm import LLM

        if enable_alpha_switch:  # workers gain the α-switch methods (backend/merge/live_vllm.py)
            llm_kw.setdefault("worker_extension_cls", "backend.merge.live_vllm.AlphaSwitchExtension")
            if "gpu_memory_utilization" not in llm_kw:
                llm_kw["gpu_memory_utilization"] = SWITCH_GPU_MEMORY_UTILIZATION
                log.warning(
                    "α switch on: θ_low and θ_high stay on the GPU, so gpu_memory_utilization is lowered to %.2f "
                    "(pass gpu_memory_utilization to override)",
                    SWITCH_GPU_MEMORY_UTILIZATION,
                )
        self.llm = LLM(model=checkpoint, enable_prefix_caching=True, **llm_kw)
        self.checkpoint = checkpoint
        self.switchable = enable_alpha_switch
        self.max_model_len = self.llm.llm_engine.model_config.max_model_len

    def alpha_switch(self, low: str, high: str):
        """In-place θ_α inside the running engine; the prefix cache is reset on every switch."""
        from backend.errors import UserError
        from backend.merge.live_vllm import VLLMAlphaSwitch

        if not self.switchable:
            raise UserError("this vLLM engine was built without the α switch; create it with enable_alpha_switch=True")
        return VLLMAlphaSwitch(self.llm, low, high)

    def _prompt_tokens(self, conversation: list[dict]) -> int:
        tokens = self.llm.get_tokenizer().apply_chat_template(conversation, tokenize=True, add_generation_prompt=True)
        return len(tokens if isinstance(tokens, list) else tokens["input_ids"])  # transformers 5: a BatchEncoding

    def generate(self, conversations: list[list[dict]], spec: SamplingSpec) -> list[list[Completion]]:
        from vllm import SamplingParams

        greedy = spec.temperature == 0
        sizes = [self._prompt_tokens(c) for c in conversations]
        fits = [i for i, n in enumerate(sizes) if n < self.max_model_len]
        common = {"n": 1 if greedy else spec.n, "temperature": spec.temperature, "top_p": spec.top_p,
                  "max_tokens": spec.max_tokens, "stop": list(spec.stop) or None, "include_stop_str_in_output": True}  # fmt: skip
        params = [SamplingParams(**common, seed=request_seed(spec.seed, i)) for i in fits]
        began = time.perf_counter()
        outputs = self.llm.chat([conversations[i] for i in fits], params, use_tqdm=True) if fits else []
        latency = time.perf_counter() - began
        out: list[list[Completion]] = [[Completion("", n, 0, "prompt_too_long", 0.0)] * spec.n for n in sizes]
        for i, req in zip(fits, outputs, strict=True):
            prompt = len(req.prompt_token_ids)
            finish = ["length" if o.finish_reason == "length" else "stop" for o in req.outputs]
            done = [
                Completion(o.text, prompt, len(o.token_ids), f, latency)
                for o, f in zip(req.outputs, finish, strict=True)
            ]
            out[i] = done * spec.n if greedy else done
        return out
