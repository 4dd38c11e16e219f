"""α switch inside a running vLLM engine (GPU only), through vLLM's documented worker-extension
and collective_rpc API (signatures of vLLM 0.31.0, the version requirements-gpu.txt pins).

Not run here: vLLM cannot run on this project's machines. tests/rollout/test_vllm_contract.py
drives it through a strict stand-in of that API, down to a Qwen2 whose load_weights fuses q/k/v
and gate/up projections as vLLM's does, and a device whose memory is a ledger.

Built by `VLLMEngine(..., alpha_switch=(low, high))`, which first plans device memory
(plan_switch_memory); `engine.alpha_switch(low, high)` returns a VLLMAlphaSwitch whose
set_alpha(α) runs before each generate call.

The memory plan. vLLM starts a worker only when the device's free memory is at least
gpu_memory_utilization × total, and then holds that share (v1/worker/utils.py:539-558,
request_memory). θ_low and θ_high and the switch's scratch buffers live beside that share, so:
  needed beside vLLM = both endpoints in the dtype they are kept in (on the device, or 0 when
                       they are host-pinned) + the scratch (two float32 buffers and the cast of the
                       largest tensor, and for host endpoints the two device copies they are
                       staged into) + a margin of 2 % of the device (CUDA context, fragmentation)
  gpu_memory_utilization = min(0.92, (free − needed) / total), vLLM's default 0.92 as the cap
and the plan is refused, in one line, when vLLM's share would not hold what vLLM itself checks at
startup: the served weights, then a KV cache for one max_model_len sequence (v1/core/
kv_cache_utils.py:898-934; a full-attention layer takes ceil(len / 16) blocks of 16 tokens × KV
heads × (K + V) × head_dim × 2 bytes, v1/kv_cache_interface.py:578-583), beside activations. vLLM
measures its activations by a profiling run; the plan cannot, so it allows a quarter of the served
weights for them (its rule of thumb, not vLLM's).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from backend.alpha import alpha_label
from backend.errors import UserError
from backend.merge import methods

log = logging.getLogger(__name__)
GiB = 2**30
VLLM_DEFAULT_UTILIZATION = 0.92  # LLM(gpu_memory_utilization=0.92), entrypoints/llm.py:199
MARGIN_FRACTION = 0.02
ACTIVATION_FRACTION = 0.25  # of the served weights: the plan's allowance for vLLM's activations
KV_BLOCK = 16  # vLLM's default KV block size (config/cache.py:71)
ITEM = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2}
ENDPOINT_PLACES = ("device", "host")


@dataclass(frozen=True)
class SwitchPlan:
    gpu_memory_utilization: float
    endpoint_bytes: int  # one endpoint, in the dtype it is kept in
    scratch_bytes: int
    endpoints_on: str  # device | host (pinned)

    def describe(self) -> str:
        return (
            f"α switch memory plan: gpu_memory_utilization {self.gpu_memory_utilization:.2f}, "
            f"{self.endpoint_bytes / GiB:.2f} GiB per endpoint on the {self.endpoints_on}"
            f"{' (pinned)' if self.endpoints_on == 'host' else ''}, {self.scratch_bytes / GiB:.2f} GiB scratch"
        )


def _sizes(folder: str) -> tuple[int, int, int, str]:
    """(parameters, bytes as stored, largest tensor's elements, dtype name) of the float tensors."""
    from backend.merge.io import CheckpointFolder

    ckpt = CheckpointFolder(folder)
    try:
        floats = [t for t in ckpt.tensors.values() if t.is_float]
    finally:
        ckpt.close()
    params = sum(t.numel for t in floats)
    dtype = max({t.dtype for t in floats}, key=lambda d: ITEM[d])
    return params, sum(t.numel * ITEM[t.dtype] for t in floats), max(t.numel for t in floats), dtype


def kv_cache_bytes(folder: str, max_model_len: int | None = None) -> tuple[int, int]:
    """(bytes, max_model_len) of one max_model_len sequence's KV cache in 16 bits, as vLLM sizes it;
    max_model_len None: the config's max_position_embeddings (vLLM's default for these models)."""
    import json
    from pathlib import Path

    config = json.loads((Path(folder) / "config.json").read_text())
    length = max_model_len or config["max_position_embeddings"]
    heads = config.get("num_key_value_heads") or config["num_attention_heads"]
    head_dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    blocks = -(-length // KV_BLOCK)
    return config["num_hidden_layers"] * blocks * KV_BLOCK * heads * 2 * head_dim * 2, length


def plan_switch_memory(
    low: str,
    high: str,
    endpoints_on: str = "device",
    utilization: float | None = None,
    max_model_len: int | None = None,
) -> SwitchPlan:
    """The plan for serving θ_α between low and high on this process's CUDA device; one line
    (UserError) when the device is too small for it."""
    import torch

    params, low_bytes, largest, dtype = _sizes(low)
    _, high_bytes, largest_high, _ = _sizes(high)
    largest = max(largest, largest_high)
    served = params * (
        2 if ITEM[dtype] >= 4 else ITEM[dtype]
    )  # vLLM serves float32 models in 16 bits (config/model.py:2372-2374)
    kv, length = kv_cache_bytes(low, max_model_len)
    vllm_needs = served + int(ACTIVATION_FRACTION * served) + kv
    on_device = endpoints_on == "device"
    scratch = largest * (2 * 4 + ITEM[dtype] + (0 if on_device else 2 * ITEM[dtype]))
    free, total = torch.cuda.mem_get_info()
    beside = (low_bytes + high_bytes if on_device else 0) + scratch + int(MARGIN_FRACTION * total)
    if utilization is None:
        utilization = min(VLLM_DEFAULT_UTILIZATION, int(100 * (free - beside) / total) / 100)
    share = utilization * total
    if share < vllm_needs or share + beside > free:
        raise UserError(
            f"{low} ({params / 1e9:.2f}B parameters, {dtype}) does not fit a live α switch on this "
            f"{total / GiB:.1f} GiB device ({free / GiB:.1f} GiB free): the endpoints need "
            f"{(low_bytes + high_bytes) / GiB:.2f} GiB on the {endpoints_on}, "
            f"leaving vLLM {max(share, 0) / GiB:.2f} GiB "
            f"of the {vllm_needs / GiB:.2f} it needs (weights {served / GiB:.2f}, KV cache for one {length}-token "
            f"sequence {kv / GiB:.2f}, activations {ACTIVATION_FRACTION * served / GiB:.2f}); try host-pinned "
            "endpoints (--switch-endpoints host), a disk sweep (no --live-switch), or bf16 endpoints (`merge inspect` "
            "shows whether bf16 keeps their difference)"
        )
    plan = SwitchPlan(round(utilization, 2), max(low_bytes, high_bytes), scratch, endpoints_on)
    log.warning(plan.describe())
    return plan


class AlphaSwitchExtension:
    """Mixed into every vLLM worker: θ_low and θ_high stay in their own dtype, on the worker's
    device or host-pinned (the plan says which); each switch streams θ_α tensor by tensor (float32
    arithmetic on the device, cast to the checkpoint dtype) into the model's own load_weights,
    which handles fused QKV / gate-up layouts by their HF names. Every method is called by name
    through collective_rpc: vLLM sends calls to its engine process as msgpack (strings, numbers),
    so its arguments and results are msgpack types."""

    def flab_load_endpoints(
        self, low: str, high: str, endpoints_on: str = "device", method: str = methods.DEFAULT
    ) -> int:
        from backend.merge.live import load_endpoints

        self._flab_method = methods.get(method).name
        self._flab_device = next(self.model_runner.model.parameters()).device
        on_gpu = self._flab_device.type == "cuda"
        if endpoints_on == "device":
            self._flab_endpoints = load_endpoints(low, high, self._flab_device)
        else:  # page-locked, so each switch's copies into the device scratch run asynchronously
            self._flab_endpoints = load_endpoints(low, high, "cpu", pin=on_gpu)
        return len(self._flab_endpoints)

    def flab_set_alpha(self, alpha: float) -> int:
        """θ_α blended on the worker's device (host endpoints are copied into its scratch first),
        streamed into the model's load_weights."""
        from backend.merge.live import blended

        weights = blended(self._flab_endpoints, alpha, self._flab_method, self._flab_device)
        loaded = self.model_runner.model.load_weights(weights=weights)
        return len(loaded) if loaded is not None else len(self._flab_endpoints)

    def flab_drop_endpoints(self) -> None:
        self._flab_endpoints = {}

    def flab_weights_digest(self) -> dict[str, str]:
        """sha256 of every parameter's bytes, by vLLM's parameter name: how bench/gpu_check.py
        compares a switched engine with one that loaded the merged folder."""
        import hashlib

        import torch

        return {
            name: hashlib.sha256(p.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes()).hexdigest()
            for name, p in self.model_runner.model.named_parameters()
        }


class VLLMAlphaSwitch:
    def __init__(self, llm, low: str, high: str, endpoints_on: str = "device", method: str = methods.DEFAULT):
        self.llm = llm
        llm.collective_rpc("flab_load_endpoints", args=(str(low), str(high), endpoints_on, method))
        self.alpha: float | None = None

    def set_alpha(self, alpha: float) -> None:
        self.llm.collective_rpc("flab_set_alpha", args=(float(alpha),))
        # KV blocks cached for the old weights would be reused for the new ones
        if not self.llm.reset_prefix_cache():
            raise RuntimeError(
                f"vLLM did not reset its prefix cache after switching to {alpha_label(alpha)}; refusing to sample"
            )
        self.alpha = alpha
