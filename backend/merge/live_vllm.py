"""α switch inside a running vLLM engine (GPU only), through vLLM's documented worker-extension
and collective_rpc API (signatures of vLLM 0.31.0, the version requirements-gpu.txt pins).

Not run here: vLLM cannot run on this project's machines. tests/rollout/test_vllm_contract.py
drives it through a strict stand-in of that API, down to a Qwen2 whose load_weights fuses q/k/v
and gate/up projections as vLLM's does.

Built by `VLLMEngine(..., enable_alpha_switch=True)`; `engine.alpha_switch(low, high)` returns a
VLLMAlphaSwitch whose set_alpha(α) runs before each generate call.
"""

from __future__ import annotations


class AlphaSwitchExtension:
    """Mixed into every vLLM worker: θ_low and θ_high stay on the GPU in their own dtype; each
    switch streams θ_α tensor by tensor (float32 arithmetic, cast to the checkpoint dtype) into the
    model's own load_weights, which handles fused QKV / gate-up layouts by their HF names."""

    def flab_load_endpoints(self, low: str, high: str) -> int:
        from backend.merge.live import load_endpoints

        device = next(self.model_runner.model.parameters()).device
        self._flab_endpoints = load_endpoints(low, high, device)
        return len(self._flab_endpoints)

    def flab_set_alpha(self, alpha: float) -> int:
        from backend.merge.live import blended

        loaded = self.model_runner.model.load_weights(weights=blended(self._flab_endpoints, alpha))
        return len(loaded) if loaded is not None else len(self._flab_endpoints)


class VLLMAlphaSwitch:
    def __init__(self, llm, low: str, high: str):
        self.llm = llm
        llm.collective_rpc("flab_load_endpoints", args=(str(low), str(high)))
        self.alpha: float | None = None

    def set_alpha(self, alpha: float) -> None:
        self.llm.collective_rpc("flab_set_alpha", args=(float(alpha),))
        # KV blocks cached for the old weights would be reused for the new ones
        if not self.llm.reset_prefix_cache():
            raise RuntimeError(f"vLLM did not reset its prefix cache after switching to α={alpha}; refusing to sample")
        self.alpha = alpha
