"""The stand-in's device and wire rules (tests/rollout/vllm_standin.py), each read from vLLM 0.31.0's
wheel: a device whose memory is a ledger, msgpack across the engine-process boundary, and the KV
cache check at start-up."""

from __future__ import annotations

import os

import msgpack

EVENTS: list[tuple] = []  # what the fake engine was asked to do, for the tests
GiB = 2**30
BLOCK_SIZE = 16  # config/cache.py:71 DEFAULT_BLOCK_SIZE


class Device:
    """One GPU's memory as a ledger: holder -> bytes."""

    def __init__(self, total: int = 140 * GiB, lag: int = 0):
        self.total, self.held, self.lag = total, {}, lag
        self.releasing: dict[str, list] = {}  # holder -> [bytes, polls left]
        self.polls = 0

    @property
    def free(self) -> int:
        return self.total - sum(self.held.values()) - sum(b for b, _ in self.releasing.values())

    def take(self, holder, nbytes: int) -> None:
        self.held[holder] = self.held.get(holder, 0) + nbytes

    def release(self, holder) -> None:
        EVENTS.append(("release", holder))
        nbytes = self.held.pop(holder, None)
        if nbytes and self.lag:
            self.releasing[holder] = [nbytes, self.lag]

    def mem_get_info(self, device=None) -> tuple[int, int]:
        self.polls += 1
        for holder, pending in list(self.releasing.items()):
            pending[1] -= 1
            if pending[1] <= 0:
                del self.releasing[holder]
        return self.free, self.total


def insecure_serialization() -> bool:
    """envs.py:1692-1693: the variable read as an int."""
    return bool(int(os.getenv("VLLM_ALLOW_INSECURE_SERIALIZATION", "0")))


def over_the_wire(obj):
    """What a value is after vLLM's MsgpackEncoder and a decoder without type information: msgpack
    types only (tuples arrive as lists). Anything else is refused with the encoder's TypeError
    (serial_utils.py:220-226, its missing space included), unless insecure serialization is on, when
    vLLM pickles it and the object arrives as it was sent."""
    if insecure_serialization():
        return obj

    def refuse(value):
        raise TypeError(
            f"Object of type {type(value)} is not serializable"
            "Set VLLM_ALLOW_INSECURE_SERIALIZATION=1 to allow fallback to pickle-based serialization."
        )

    return msgpack.unpackb(msgpack.packb(obj, default=refuse), strict_map_key=False)


def kv_cache_bytes(config: dict, max_model_len: int) -> int:
    """One max_model_len sequence's KV cache in a 16-bit cache: every full-attention layer holds
    ceil(len / 16) blocks (kv_cache_interface.py:578-583) of 16 tokens × KV heads × (K + V) head_dim."""
    heads = config.get("num_key_value_heads") or config["num_attention_heads"]
    head_dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    blocks = -(-max_model_len // BLOCK_SIZE)
    return config["num_hidden_layers"] * blocks * BLOCK_SIZE * heads * 2 * head_dim * 2


def check_kv_cache(available: int, config: dict, max_model_len: int) -> None:
    """kv_cache_utils.py:898-934 with its messages; the stand-in's activations take nothing."""
    if available <= 0:
        raise ValueError(
            "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
            "initializing the engine (this flag also controls CPU memory reservation on the CPU backend, "
            "despite its name). See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
        )
    needed = kv_cache_bytes(config, max_model_len)
    if needed > available:
        raise ValueError(
            f"To serve at least one request with the model's max seq len ({max_model_len}), "
            f"({round(needed / GiB, 2)} GiB KV cache is needed, which is larger than the available KV cache memory "
            f"({round(available / GiB, 2)} GiB). Try increasing `gpu_memory_utilization` (which also controls CPU "
            "memory on the CPU backend) or decreasing `max_model_len` when initializing the engine. "
            "See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
        )
