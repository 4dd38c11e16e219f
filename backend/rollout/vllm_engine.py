"""vLLM engine. GPU only, imported lazily. Not run here (vLLM cannot run on this project's
machines): written against vLLM 0.31.0's offline API (LLM.chat, LLM.generate, SamplingParams,
collective_rpc, reset_prefix_cache, engine_core.shutdown) and tested through a strict stand-in of
it (tests/rollout/test_vllm_contract.py).

Sampling matches the spec:
- prompt i's request carries the seed seeds[i] (default S + i·n) and n = spec.n; vLLM gives its
  k-th child sample seed + k (v1/engine/parallel_sampling.py:69-81), so a run's samples own
  distinct seeds (rollout/spec.py seed_of) and share no sampling noise;
- greedy decoding (T < 1e-5) with n > 1, which vLLM refuses, is one request with n = 1, copied n times;
- messages go through LLM.chat (the tokenizer's chat template), plain prompts through LLM.generate;
- a prompt that does not fit max_model_len becomes that sample's format failure
  ("prompt_too_long"), not a failed batch.

One engine per device at a time: a vLLM engine holds its memory share until its engine core is
shut down, so close() does that before the next engine is built (sweep/executors.py Engines). The
engine core's worker processes give their memory back after shutdown returns, so an engine built
after one closed in this process first waits (at most RELEASE_WAIT_S) until the device's free
memory covers the share it will ask for; vLLM would refuse to start with that memory still held.
"""

from __future__ import annotations

import gc
import logging
import time

from backend.rollout.spec import Completion, SamplingSpec

log = logging.getLogger(__name__)
RELEASE_WAIT_S = 60.0
POLL_S = 0.5
_closed: list[float] = []  # when this process's engines were shut down (monotonic clock)


def request_seeds(spec: SamplingSpec, count: int) -> list[int]:
    from backend.rollout.spec import seed_of

    return [seed_of(spec.seed, i, spec.n) for i in range(count)]


def wait_for_released_memory(utilization: float) -> None:
    """After an engine of this process was shut down, wait (until RELEASE_WAIT_S after that) for
    the device's free memory to cover `utilization` of it, vLLM's start-up check (v1/worker/utils.py:
    539-558). Past the bound the engine is built anyway and vLLM says why not. Before any engine
    closed this asks nothing, so it creates no CUDA context in this process."""
    import torch

    if not _closed:
        return
    free, total = torch.cuda.mem_get_info()
    while free < utilization * total and time.monotonic() < _closed[-1] + RELEASE_WAIT_S:
        time.sleep(POLL_S)
        free, total = torch.cuda.mem_get_info()
    if free < utilization * total:
        log.warning("the closed engine's memory has not come back: %.2f of %.2f GiB free", free / 2**30, total / 2**30)


class VLLMEngine:
    def __init__(
        self,
        checkpoint: str,
        *,
        alpha_switch: tuple[str, str] | None = None,
        switch_endpoints: str = "device",
        **llm_kw,
    ):
        from vllm import LLM

        from backend.merge.live_vllm import VLLM_DEFAULT_UTILIZATION, plan_switch_memory

        wait_for_released_memory(llm_kw.get("gpu_memory_utilization") or VLLM_DEFAULT_UTILIZATION)
        if alpha_switch:  # workers gain the α-switch methods; the plan sizes vLLM's share around the endpoints
            llm_kw.setdefault("worker_extension_cls", "backend.merge.live_vllm.AlphaSwitchExtension")
            plan = plan_switch_memory(
                *alpha_switch, switch_endpoints, llm_kw.get("gpu_memory_utilization"), llm_kw.get("max_model_len")
            )
            llm_kw["gpu_memory_utilization"] = plan.gpu_memory_utilization
        self.llm = LLM(model=checkpoint, enable_prefix_caching=True, **llm_kw)
        self.checkpoint = checkpoint
        self.endpoints = alpha_switch
        self.switch_endpoints = switch_endpoints
        self.max_model_len = self.llm.llm_engine.model_config.max_model_len

    def close(self) -> None:
        """Give the device back: shut the engine core down (its worker processes and their memory
        share; v1/engine/core_client.py:391), drop the references, collect, empty the CUDA cache."""
        import torch

        if self.llm is None:
            return
        self.llm.llm_engine.engine_core.shutdown()
        self.llm = None
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        _closed.append(time.monotonic())

    def alpha_switch(self, low: str, high: str):
        """In-place θ_α inside the running engine; the prefix cache is reset on every switch."""
        from backend.errors import UserError
        from backend.merge.live_vllm import VLLMAlphaSwitch

        if not self.endpoints:
            raise UserError("this vLLM engine was built without the α switch; create it with alpha_switch=(low, high)")
        return VLLMAlphaSwitch(self.llm, low, high, self.switch_endpoints)

    def _prompt_tokens(self, prompt) -> int:
        tokenizer = self.llm.get_tokenizer()
        if isinstance(prompt, str):
            return len(tokenizer(prompt)["input_ids"])
        tokens = tokenizer.apply_chat_template(prompt, tokenize=True, add_generation_prompt=True)
        return len(tokens if isinstance(tokens, list) else tokens["input_ids"])  # transformers 5: a BatchEncoding

    def generate(self, prompts: list, spec: SamplingSpec, seeds: list[int] | None = None) -> list[list[Completion]]:
        from vllm import SamplingParams

        seeds = seeds if seeds is not None else request_seeds(spec, len(prompts))
        sizes = [self._prompt_tokens(p) for p in prompts]
        fits = [i for i, n in enumerate(sizes) if n < self.max_model_len]
        common = {
            "n": 1 if spec.greedy else spec.n,
            "temperature": spec.temperature,
            "top_p": spec.top_p,
            "max_tokens": spec.max_tokens,
            "stop": list(spec.stop) or None,
            "include_stop_str_in_output": True,
        }
        params = [SamplingParams(**common, seed=seeds[i]) for i in fits]
        chosen = [prompts[i] for i in fits]
        began = time.perf_counter()
        outputs = self._submit(chosen, params) if fits else []
        latency = time.perf_counter() - began
        out: list[list[Completion]] = [[Completion("", n, 0, "prompt_too_long", 0.0)] * spec.n for n in sizes]
        for i, req in zip(fits, outputs, strict=True):
            prompt = len(req.prompt_token_ids)
            finish = ["length" if o.finish_reason == "length" else "stop" for o in req.outputs]
            done = [  # the k-th child sample drew seed + k (v1/engine/parallel_sampling.py:69-81)
                Completion(o.text, prompt, len(o.token_ids), f, latency, seeds[i] + k)
                for k, (o, f) in enumerate(zip(req.outputs, finish, strict=True))
            ]
            out[i] = done * spec.n if spec.greedy else done
        return out

    def _submit(self, prompts: list, params: list):
        """Plain prompts through LLM.generate (entrypoints/llm.py:420), messages through LLM.chat
        (:615), which refuses a tokenizer without a chat template (renderers/hf.py:794-799)."""
        plain = [isinstance(p, str) for p in prompts]
        if all(plain):
            return self.llm.generate(prompts, params, use_tqdm=True)
        if any(plain):
            raise ValueError("one generate call mixes plain prompts and chat messages")
        return self.llm.chat(prompts, params, use_tqdm=True)
