"""The RL memory plan: bytes per training GPU before a run starts, and one line when they do not fit;
and the host memory the run takes at load and at save, printed beside it.

Per GPU, under the run's sharding: weights, gradients and Adam's two moments (float32 for every
trained parameter: GRPOTrainer loads float32 weights, and bf16 mixed precision keeps them as the
master copy), a frozen LoRA base in bf16, what FSDP holds gathered, activations (an estimate
below), TRL's tiled LM head, the CUDA runtime and vLLM's share of the card in colocate mode.

- Gathered (FSDP1, transformer-based wrap): the root unit holds what no decoder layer holds
  (embeddings, final norm, an untied lm_head: 1.09 B parameters for Qwen2.5-7B); it is gathered
  for the forward and stays gathered, with its unsharded gradients, until the backward ends. Of
  the decoder layers, one is gathered and the next prefetched (BACKWARD_PRE), with one layer's
  unsharded gradients. All in the compute dtype (accelerate's bf16 policy also reduces in bf16).
- TRL 1.16's LM head never builds the logits (trl/kernels/chunked_logprob.py): it projects tiles of
  4096 tokens x 32768 vocabulary entries, keeps seven float32 numbers per token, and its backward
  builds the head's weight gradient and the hidden states' gradient in float32.
- The CUDA runtime: the context, NCCL's buffers and cuBLAS's workspaces (1.5-2 GiB on an H100;
  2 GiB planned).
- Host memory: FSDP's efficient loading puts the float32 model on rank 0's host only (every
  process's otherwise); a save gathers the full float32 weights and Adam's moments on rank 0
  (FULL_STATE_DICT); a resume reads the full weights in every process, as accelerate's own loader.

The activation estimate, the CUDA runtime figure and the 5 % margin are rules of thumb, not
measured; weights, gradients, optimizer states, gathered units and the LM head's buffers are byte
counts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

from backend.errors import UserError

GiB = float(1 << 30)
PROMPT_TOKENS = 1024  # a prompt allowance: the builtin problems' prompts fit; long statements need more
TRL_VLLM_SHARE = 0.3  # GRPOConfig.vllm_gpu_memory_utilization's default, colocate mode
MARGIN = 0.95  # of the card: allocator fragmentation
CUDA_RUNTIME = 2 * (1 << 30)  # CUDA context, NCCL buffers, cuBLAS workspaces (1.5-2 GiB measured elsewhere)
TOKEN_TILE, VOCAB_TILE = 4096, 32768  # TRL 1.16's LM-head tile (chunked_logprob.py:31, utils.py:1506)


@dataclass(frozen=True)
class ModelShape:
    params: int
    hidden: int
    layers: int
    intermediate: int
    vocab: int
    kv_dim: int  # key/value width: kv heads x head dim (grouped-query attention)
    root: int = 0  # parameters outside the decoder layers: embeddings, final norm, an untied lm_head

    @property
    def layer_params(self) -> float:
        return (self.params - self.root) / self.layers

    @classmethod
    def of(cls, folder: str | Path) -> ModelShape:
        """Read from a checkpoint folder: config.json's sizes and the safetensors' element counts."""
        from backend.merge.io import CheckpointFolder

        ckpt = CheckpointFolder(folder)
        try:
            params = sum(t.numel for t in ckpt.tensors.values())
        finally:
            ckpt.close()
        c = json.loads((Path(folder) / "config.json").read_text())
        heads = c.get("num_attention_heads", 1)
        head_dim = c.get("head_dim") or c["hidden_size"] // heads
        h, v = c["hidden_size"], c["vocab_size"]
        root = v * h * (1 if c.get("tie_word_embeddings", False) else 2) + h
        return cls(
            params,
            h,
            c["num_hidden_layers"],
            c.get("intermediate_size", 4 * h),
            v,
            c.get("num_key_value_heads", heads) * head_dim,
            root,
        )


@dataclass(frozen=True)
class Setup:
    """What decides the bytes: the spec's choices and the card."""

    processes: int  # training processes (one GPU each)
    sharded: bool  # FSDP full shard over the processes
    bf16: bool  # mixed precision: activations in bf16
    checkpointing: bool
    lora_rank: int
    batch: int  # completions per forward pass (per_device_train_batch_size)
    completion: int  # max_completion_length
    vllm_share: float  # of the card, held by a colocated vLLM engine (0: none)
    device_bytes: int


@dataclass(frozen=True)
class MemoryPlan:
    per_gpu: dict[str, float]  # bytes: weights, gradients, optimizer, gathered, activations, lm_head, cuda, vllm
    device_bytes: int
    host: dict[str, float] | None = None  # bytes of host memory: at load, at save (rank 0), at resume (node)

    @property
    def total(self) -> float:
        return sum(self.per_gpu.values())

    @property
    def fits(self) -> bool:
        return self.total <= MARGIN * self.device_bytes

    def line(self) -> str:
        parts = ", ".join(f"{k} {v / GiB:.1f}" for k, v in self.per_gpu.items())
        return f"{self.total / GiB:.1f} GiB per GPU ({parts}) of {self.device_bytes / GiB:.1f} GiB"

    def host_line(self) -> str:
        return "host memory: " + ", ".join(f"{k} {v / 1e9:.1f} GB" for k, v in (self.host or {}).items())


def lora_params(shape: ModelShape, rank: int) -> int:
    """LoRA's trainable parameters on every linear layer of a decoder block: r x (in + out) each."""
    h, i, kv = shape.hidden, shape.intermediate, shape.kv_dim
    per_layer = (h + h) + 2 * (h + kv) + (h + h) + 2 * (h + i) + (i + h)  # q, k, v, o, gate, up, down
    return rank * per_layer * shape.layers


def plan_memory(shape: ModelShape, s: Setup) -> MemoryPlan:
    shard = s.processes if s.sharded else 1
    trained = lora_params(shape, s.lora_rank) if s.lora_rank else shape.params
    frozen = 2 * shape.params if s.lora_rank else 0  # the LoRA base in bf16, sharded like the rest
    act = 2 if s.bf16 else 4
    tokens = s.batch * (PROMPT_TOKENS + s.completion)
    layer = tokens * (8 * shape.hidden + 3 * shape.intermediate) * act  # one block's saved activations
    kept = tokens * shape.hidden * act * shape.layers + layer if s.checkpointing else layer * shape.layers
    per_gpu = {
        "weights": (4 * trained + frozen) / shard,
        "gradients": 4 * trained / shard,
        "optimizer": 8 * trained / shard,  # Adam's two float32 moments
        "gathered": gathered_bytes(shape, act, trained_root=not s.lora_rank) if shard > 1 else 0,
        "activations": kept,
        "lm_head": lm_head_bytes(shape, tokens, act, trained=not s.lora_rank),
        "cuda": CUDA_RUNTIME,
        "vllm": s.vllm_share * s.device_bytes,
    }
    return MemoryPlan(per_gpu, s.device_bytes, host_bytes(shape, s, trained))


def gathered_bytes(shape: ModelShape, act: int, trained_root: bool = True) -> float:
    """FSDP1's unsharded parameters and gradients at the backward's peak: the root unit whole, one
    decoder layer gathered and the next prefetched, one layer's gradients (LoRA: none for the root)."""
    params = (shape.root + 2 * shape.layer_params) * act
    grads = ((shape.root if trained_root else 0) + shape.layer_params) * act
    return params + grads


def lm_head_bytes(shape: ModelShape, tokens: int, act: int, trained: bool = True) -> float:
    """TRL 1.16's fused LM head on one micro-batch: a projection tile, seven float32 numbers per
    token, and in the backward float32 gradients of the hidden states and (trained) of the head."""
    tile = min(tokens, TOKEN_TILE) * min(shape.vocab, VOCAB_TILE) * act
    per_token = 7 * 4 * tokens + 4 * tokens * shape.hidden
    head_grad = 4 * shape.vocab * shape.hidden if trained else 0
    return tile + per_token + head_grad


def host_bytes(shape: ModelShape, s: Setup, trained: int) -> dict[str, float]:
    """Host memory of the node: at load (FSDP's efficient loading: rank 0's float32 copy only), at
    each save (rank 0 gathers float32 weights and Adam's moments), at a resume (every process reads
    the full weights)."""
    full = 4 * shape.params
    return {
        "at load": full if s.sharded else full * s.processes,
        "at save": full + 8 * trained,
        "at resume": full * s.processes,
    }


def setup_of(spec, device_bytes: int, bf16: bool, checkpointing: bool) -> Setup:
    colocated = spec.use_vllm and spec.vllm_mode == "colocate"
    return Setup(
        spec.training_processes,
        spec.launched and spec.sharding == "fsdp",
        bf16,
        checkpointing,
        spec.lora_rank,
        spec.per_device_train_batch_size,
        spec.max_completion_length,
        TRL_VLLM_SHARE if colocated else 0.0,
        device_bytes,
    )


def check_memory(shape: ModelShape, setup: Setup, use_vllm: bool = False) -> MemoryPlan:
    """The plan, or one line naming the GiB it needs and the settings that would fit."""
    plan = plan_memory(shape, setup)
    if plan.fits:
        return plan
    fixes = [name for name, other in alternatives(shape, setup, use_vllm) if plan_memory(shape, other).fits]
    hint = f"would fit: {'; '.join(fixes)}" if fixes else "no single change (more GPUs, LoRA, server mode) fits"
    raise UserError(f"RL memory plan: {plan.line()}, over {MARGIN:.0%} of the card; {hint}")


def alternatives(shape: ModelShape, s: Setup, use_vllm: bool) -> list[tuple[str, Setup]]:
    """One change each: what a user can set to make the plan smaller."""
    out = []
    for n in (1, 2, 4, 8, 16, 32, 64):  # the fewest training GPUs that fit, FSDP over them
        more = replace(s, processes=n, sharded=n > 1)
        if n >= s.processes and (n, n > 1) != (s.processes, s.sharded) and plan_memory(shape, more).fits:
            out.append(("--sharding fsdp" if n == s.processes else f"{n} training GPUs with --sharding fsdp", more))
            break
    if not s.lora_rank:
        out.append(("--lora-rank 16", replace(s, lora_rank=16)))
    if use_vllm and s.vllm_share:
        out.append(("--vllm-mode server (one more GPU serves vLLM)", replace(s, vllm_share=0.0)))
    if not s.checkpointing:
        out.append(("--gradient-checkpointing on", replace(s, checkpointing=True)))
    return out


def device_bytes() -> int:
    """The first visible GPU's total memory (after the job's lease set CUDA_VISIBLE_DEVICES); a
    property query, so the job's own process holds no CUDA context on a GPU its trainers use."""
    import torch

    return int(torch.cuda.get_device_properties(0).total_memory)


def plan_here(spec) -> MemoryPlan:
    """The run's plan on this node's first visible GPU (after the job's lease), refused in one line
    when it does not fit; the job's log states it."""
    flags = spec.on_gpu(True)
    setup = setup_of(spec, device_bytes(), flags["bf16"], flags["gradient_checkpointing"])
    plan = check_memory(ModelShape.of(spec.base), setup, spec.use_vllm)
    print(f"RL memory plan: {plan.line()}; {plan.host_line()}; {flags}", flush=True)
    return plan
