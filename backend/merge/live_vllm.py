"""α switch inside a running vLLM engine. GPU only; NOT TESTED HERE (vLLM cannot run on this
project's machines): written against vLLM's documented worker-extension / collective_rpc API.

Create the engine with `LLM(model=low, worker_extension_cls="backend.merge.live_vllm.AlphaSwitchExtension")`,
then `VLLMAlphaSwitch(llm, low, high).set_alpha(α)` before each generate call.
"""

from __future__ import annotations


class AlphaSwitchExtension:
    """Mixed into every vLLM worker: holds θ_low and Δ on the GPU and loads θ_α through the
    model's own load_weights (which handles fused QKV/MLP layouts and dtype casts)."""

    def flab_load_endpoints(self, low: str, high: str) -> int:
        from backend.merge.live import load_endpoint_tensors

        theta, delta = load_endpoint_tensors(low, high)
        device = next(self.model_runner.model.parameters()).device
        self._flab_endpoints = {n: (theta[n].to(device), delta[n].to(device)) for n in theta}
        return len(self._flab_endpoints)

    def flab_set_alpha(self, alpha: float) -> bool:
        weights = ((name, low + alpha * d) for name, (low, d) in self._flab_endpoints.items())
        self.model_runner.model.load_weights(weights=weights)
        return True


class VLLMAlphaSwitch:
    def __init__(self, llm, low: str, high: str):
        self.llm = llm
        llm.collective_rpc("flab_load_endpoints", args=(str(low), str(high)))
        self.alpha: float | None = None

    def set_alpha(self, alpha: float) -> None:
        self.llm.collective_rpc("flab_set_alpha", args=(float(alpha),))
        self.llm.reset_prefix_cache()  # cached KV blocks were computed with the old weights
        self.alpha = alpha
