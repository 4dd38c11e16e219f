"""A strict stand-in for the part of vLLM's offline API that frontier-lab calls.

Signatures are those of vLLM 0.31.0 (the version requirements-gpu.txt pins), read from its wheel:
`LLM.__init__` (keyword-only options; the rest go to EngineArgs, of which only real field names are
accepted here), `LLM.chat`, `LLM.generate`, `LLM.collective_rpc`, `LLM.reset_prefix_cache`,
`LLM.get_tokenizer`, `llm_engine.model_config.max_model_len`, `llm_engine.engine_core.shutdown`
and `SamplingParams` (its field names). It refuses any other argument, a list of SamplingParams
whose length is not the number of prompts, and a prompt longer than max_model_len, as vLLM does.

It keeps vLLM's rules, not only its signatures (file:line in vLLM 0.31.0's wheel):
- one device with a memory ledger (DEVICE): an LLM starts only when free ≥ gpu_memory_utilization
  × total (v1/worker/utils.py:539-558) and holds that share until its engine core is shut down
  (v1/engine/core_client.py:391-393) or collected (its weakref finalizer, core_client.py:373);
  torch.cuda.mem_get_info answers from the ledger (install() patches it, in tests only); tensors
  a worker extension puts on the device (the α switch's endpoints) are charged beside the share;
- the k-th of n child samples gets seed + k (v1/engine/parallel_sampling.py:69-81);
- the sampling noise depends on the seed alone, not on the prompt (v1/worker/gpu/sample/gumbel.py:
  164-198): every completion shows its `noise=` tag, so two requests that share a seed collide visibly;
- 0 < temperature < 0.01 is raised to 0.01 first (sampling_params.py:28, 494-502), so only 0 is
  greedy (< 1e-5, :27, 549-554): no noise, and n > 1 refused;
- collective_rpc crosses a process boundary as msgpack (v1/engine/core_client.py:1071-1078 sends it
  as a utility call; v1/serial_utils.py:190-227 encodes it): its method, args, kwargs and result
  must be msgpack types, a function is refused with vLLM's TypeError unless
  VLLM_ALLOW_INSECURE_SERIALIZATION=1, and tuples arrive as lists;
- the KV cache must hold one max_model_len sequence in what the share leaves after the weights
  (v1/core/kv_cache_utils.py:898-934, with vLLM's message); a full-attention layer needs
  ceil(max_model_len / 16) blocks of 16 tokens × KV heads × 2 × head_dim × 2 bytes
  (v1/kv_cache_interface.py:578-583, config/cache.py:71);
- a shut-down engine's memory comes back after `Device.lag` further mem_get_info polls (a
  multiprocess engine's workers exit after shutdown returns), so the next engine must wait for it;
- chat() needs a chat template (renderers/hf.py:794-799); generate() takes plain prompts.

It stands in for the *model* only: a completion's text is a function of (prompt tokens, noise,
weights), and the worker holds a Qwen2 in vLLM's fused layout (qkv_proj, gate_up_proj) whose
load_weights takes Hugging Face names, as vLLM's does. Nothing here is vLLM's code.
The device ledger, the msgpack wire and the KV check live in vllm_standin_rules.py.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import inspect
import json
import math
import sys
import types
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import torch

from tests.rollout.vllm_standin_rules import (  # noqa: F401 (insecure_serialization: for the tests)
    EVENTS,
    Device,
    GiB,
    check_kv_cache,
    insecure_serialization,
    over_the_wire,
)

ENGINE_ARGS = {"max_model_len", "enable_prefix_caching", "disable_log_stats", "worker_cls", "worker_extension_cls"}
SAMPLING_FIELDS = {
    "n", "presence_penalty", "frequency_penalty", "repetition_penalty", "temperature", "top_p", "top_k", "min_p",
    "seed", "stop", "stop_token_ids", "ignore_eos", "max_tokens", "min_tokens", "logprobs", "prompt_logprobs",
    "detokenize", "skip_special_tokens", "spaces_between_special_tokens", "include_stop_str_in_output",
    "output_kind", "structured_outputs", "logit_bias", "allowed_token_ids", "extra_args", "bad_words",
}  # fmt: skip
SAMPLING_EPS = 1e-5  # sampling_params.py:27
MAX_TEMP = 1e-2  # sampling_params.py:28: 0 < T below it is raised to it


class VLLMValidationError(Exception):
    pass


class ChatTemplateResolutionError(ValueError):  # entrypoints/chat_utils.py:89
    pass


DEVICE = Device()


class SamplingParams:
    def __init__(self, **fields):
        unknown = set(fields) - SAMPLING_FIELDS
        if unknown:
            raise TypeError(f"SamplingParams got unexpected keyword arguments {sorted(unknown)}")
        self.n, self.temperature, self.seed = fields.get("n", 1), fields.get("temperature", 1.0), fields.get("seed")
        self.max_tokens, self.stop = fields.get("max_tokens", 16), fields.get("stop")
        if 0 < self.temperature < MAX_TEMP:  # sampling_params.py:494-502, before the greedy test
            EVENTS.append(("temperature_raised", self.temperature))
            self.temperature = MAX_TEMP
        if self.seed == -1:  # sampling_params.py:504-505
            self.seed = None
        if self.temperature < SAMPLING_EPS and self.n > 1:  # sampling_params.py:549-554, 703-707
            raise VLLMValidationError(f"n must be 1 when using greedy sampling, got {self.n}.")

    @property
    def greedy(self) -> bool:
        return self.temperature < SAMPLING_EPS

    def child_seeds(self) -> list[int | None]:
        """parallel_sampling.py:69-81: child k of a seeded request gets seed + k."""
        return [None if self.seed is None else self.seed + k for k in range(self.n)]


def noise(seed: int | None) -> str:
    """The sampler's draw for a seed: the same for every prompt (gumbel.py hashes (seed, pos, token))."""
    if seed is None:  # vLLM draws a random int64 seed (v1/worker/gpu/sample/states.py:56-57)
        seed = int.from_bytes(__import__("os").urandom(8), "little")
    return hashlib.sha256(str(seed).encode()).hexdigest()[:10]


@dataclass
class CompletionOutput:
    index: int
    text: str
    token_ids: list[int]
    finish_reason: str


@dataclass
class RequestOutput:
    prompt_token_ids: list[int]
    outputs: list[CompletionOutput]


PACKED = {"qkv_proj": ("q_proj", "k_proj", "v_proj"), "gate_up_proj": ("gate_proj", "up_proj")}


class FusedQwen2(torch.nn.Module):
    """A Qwen2 in vLLM's parameter layout, built from a Hugging Face state dict."""

    def __init__(self, hf_state: dict[str, torch.Tensor]):
        super().__init__()
        self.shards: dict[str, list[tuple[str, int, int]]] = {}  # fused name -> [(hf name, start, stop)]
        fused: dict[str, list[tuple[str, torch.Tensor]]] = {}
        plain = {}
        for name, tensor in hf_state.items():
            for target, parts in PACKED.items():
                part = next((p for p in parts if f".{p}." in name), None)
                if part:
                    fused.setdefault(name.replace(part, target), []).append((name, tensor))
                    break
            else:
                plain[name] = tensor
        self.names = {}
        for fname, members in fused.items():
            order = next(parts for t, parts in PACKED.items() if t in fname)
            members.sort(key=lambda m: next(i for i, p in enumerate(order) if f".{p}." in m[0]))
            start, spans = 0, []
            for hf_name, t in members:
                spans.append((hf_name, start, start + t.shape[0]))
                start += t.shape[0]
            self.shards[fname] = spans
            self._add(fname, torch.cat([t for _, t in members]))
        for name, t in plain.items():
            self._add(name, t)

    def _add(self, name: str, tensor: torch.Tensor) -> None:
        key = name.replace(".", "__")
        self.names[name] = key
        self.register_parameter(key, torch.nn.Parameter(tensor.clone(), requires_grad=False))

    def param(self, name: str) -> torch.nn.Parameter:
        return getattr(self, self.names[name])

    def load_weights(self, weights) -> set[str]:
        """HF-named tensors in, fused where vLLM fuses; a dtype that is not the parameter's is
        recorded (vLLM logs a warning for each), an unknown name is an error."""
        loaded = set()
        for name, tensor in weights:
            if tensor.dtype != next(self.parameters()).dtype:
                EVENTS.append(("dtype_mismatch", name, tensor.dtype))
            target = next((f for f, spans in self.shards.items() if any(s[0] == name for s in spans)), None)
            if target:
                _, a, b = next(s for s in self.shards[target] if s[0] == name)
                self.param(target).data[a:b].copy_(tensor)
                loaded.add(target)
            elif name in self.names:
                self.param(name).data.copy_(tensor)
                loaded.add(name)
            else:
                raise KeyError(f"{name} is not a parameter of the model")
        return loaded


class _ModelRunner:
    def __init__(self, model):
        self.model = model


class _ModelConfig:
    def __init__(self, max_model_len: int):
        self.max_model_len = max_model_len


class _EngineCoreClient:
    """Holds the engine's device share; shutdown() or garbage collection gives it back (core_client.py:373, 391-393)."""

    def __init__(self, holder: str):
        self.holder = holder
        self._finalizer = weakref.finalize(self, DEVICE.release, holder)

    def shutdown(self, timeout: float | None = None) -> None:
        EVENTS.append(("shutdown", self.holder))
        if self._finalizer.detach() is not None:
            DEVICE.release(self.holder)


class _Engine:
    def __init__(self, max_model_len: int, holder: str):
        self.model_config = _ModelConfig(max_model_len)
        self.engine_core = _EngineCoreClient(holder)


class LLM:
    instances: ClassVar[list[LLM]] = []
    built = 0
    reset_result = True  # set False to see the caller refuse a failed prefix-cache reset

    def __init__(self, model: str, *, tokenizer=None, seed: int = 0, gpu_memory_utilization: float = 0.92,
                 dtype="auto", enforce_eager: bool = False, tensor_parallel_size: int = 1, **kwargs):  # fmt: skip
        unknown = set(kwargs) - ENGINE_ARGS
        if unknown:
            raise TypeError(f"EngineArgs.__init__() got unexpected keyword arguments {sorted(unknown)}")
        from safetensors.torch import load_file
        from transformers import AutoTokenizer

        free, total = DEVICE.mem_get_info()
        requested = math.ceil(total * gpu_memory_utilization)  # v1/worker/utils.py:539-558
        if free < requested:
            raise ValueError(
                f"Free memory on device cuda:0 ({free / GiB:.2f}/{total / GiB:.2f} GiB) on startup is "
                f"less than desired GPU memory utilization ({gpu_memory_utilization}, {requested / GiB:.2f} GiB). "
                "Decrease GPU memory utilization or reduce GPU memory used by other processes."
            )
        self.model_path, self.kwargs = model, kwargs
        self.gpu_memory_utilization = gpu_memory_utilization
        self.tokenizer = AutoTokenizer.from_pretrained(tokenizer or model)
        config = json.loads((Path(model) / "config.json").read_text())
        LLM.built += 1
        holder = f"engine-{LLM.built}"
        DEVICE.take(holder, requested)
        EVENTS.append(("start", holder, model))
        self.llm_engine = _Engine(kwargs.get("max_model_len") or config["max_position_embeddings"], holder)
        worker_cls = type("Worker", (_worker_extension(kwargs.get("worker_extension_cls")),), {})
        self.worker = worker_cls()
        state = {}
        for f in sorted(Path(model).glob("*.safetensors")):
            state.update(load_file(str(f)))
        served = sum(t.numel() * min(t.element_size(), 2) for t in state.values() if t.is_floating_point())
        try:
            check_kv_cache(requested - served, config, self.llm_engine.model_config.max_model_len)
        except ValueError:
            self.llm_engine.engine_core.shutdown()  # a failed start gives its share back
            raise
        self.worker.model_runner = _ModelRunner(FusedQwen2(state))
        LLM.instances.append(self)

    def get_tokenizer(self):
        return self.tokenizer

    def chat(self, messages, sampling_params=None, use_tqdm=True, lora_request=None, chat_template=None,
             chat_template_content_format="auto", add_generation_prompt=True, continue_final_message=False,
             tools=None, chat_template_kwargs=None, tokenization_kwargs=None, mm_processor_kwargs=None):  # fmt: skip
        if (chat_template or self.tokenizer.chat_template) is None:  # renderers/hf.py:794-799
            raise ChatTemplateResolutionError(
                "As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat "
                "template if the tokenizer does not define one."
            )
        conversations = [messages] if messages and isinstance(messages[0], dict) else list(messages)
        EVENTS.append(("call", "chat"))
        ids = []
        for conv in conversations:
            tokens = self.tokenizer.apply_chat_template(conv, tokenize=True, add_generation_prompt=True)
            ids.append(tokens if isinstance(tokens, list) else tokens["input_ids"])
        return self._run(ids, sampling_params)

    def generate(self, prompts, sampling_params=None, *, use_tqdm=True, lora_request=None, priority=None,
                 tokenization_kwargs=None, mm_processor_kwargs=None):  # fmt: skip
        prompts = [prompts] if isinstance(prompts, str) else list(prompts)
        if not all(isinstance(p, str) for p in prompts):
            raise TypeError("the stand-in takes text prompts only")
        EVENTS.append(("call", "generate"))
        EVENTS.extend(("prompt", p) for p in prompts)
        return self._run([self.tokenizer(p)["input_ids"] for p in prompts], sampling_params)

    def _run(self, ids_per_prompt: list[list[int]], sampling_params) -> list[RequestOutput]:
        params = (
            sampling_params if isinstance(sampling_params, list | tuple) else [sampling_params] * len(ids_per_prompt)
        )
        if len(params) != len(ids_per_prompt):
            raise ValueError("The lengths of prompts and sampling_params must be the same.")
        out = []
        for ids, p in zip(ids_per_prompt, params, strict=True):
            limit = self.llm_engine.model_config.max_model_len
            if len(ids) >= limit:
                raise VLLMValidationError(
                    f"The decoder prompt (length {len(ids)}) is longer than the maximum model length of {limit}."
                )
            EVENTS.append(("request", p.seed, p.n))
            outputs = []
            for k, seed in enumerate(p.child_seeds()):
                drawn = "greedy" if p.greedy else noise(seed)
                EVENTS.append(("sample", seed, drawn))
                digest = hashlib.sha256(f"{ids}|{drawn}|{self._weights_digest()}".encode()).hexdigest()[:8]
                text = f"sample {digest} noise={drawn}\n```python\nprint({k})\n```"
                outputs.append(CompletionOutput(k, text, [1, 2, 3], "stop"))
            out.append(RequestOutput(list(ids), outputs))
        return out

    def _weights_digest(self) -> str:
        first = next(self.worker.model_runner.model.parameters())
        return f"{float(first.float().sum()):.6f}"

    def collective_rpc(
        self, method, timeout: float | None = None, args: tuple = (), kwargs: dict | None = None
    ) -> list:
        EVENTS.append(("rpc", method))
        method, timeout, args, kwargs = over_the_wire((method, timeout, args, kwargs))  # to the engine core
        fn = getattr(self.worker, method) if isinstance(method, str) else method.__get__(self.worker)
        result = fn(*args, **(kwargs or {}))
        if method == "flab_load_endpoints":
            self._charge_endpoints(args[2] if len(args) > 2 else "device")
        return [over_the_wire(result)]  # and back, as a UtilityResult

    def _charge_endpoints(self, place: str) -> None:
        """The worker runs on the CPU here, so what the call asked for says which of its tensors a
        GPU worker would hold: endpoints on the device are charged beside the engine's share."""
        if place != "device":
            return
        nbytes = sum(t.numel() * t.element_size() for pair in self.worker._flab_endpoints.values() for t in pair)
        if nbytes > DEVICE.free:
            raise torch.OutOfMemoryError(
                f"CUDA out of memory. Tried to allocate {nbytes / GiB:.2f} GiB; {DEVICE.free / GiB:.2f} GiB free"
            )
        DEVICE.take(self.llm_engine.engine_core.holder, nbytes)

    def reset_prefix_cache(self, reset_running_requests: bool = False, reset_connector: bool = False) -> bool:
        EVENTS.append(("reset_prefix_cache",))
        return LLM.reset_result


def _worker_extension(qualified: str | None) -> type:
    if not qualified:
        return object
    module, _, name = qualified.rpartition(".")
    return getattr(importlib.import_module(module), name)


def install(monkeypatch, device_bytes: int = 140 * GiB, lag: int = 0) -> types.ModuleType:
    """Make `import vllm` give this stand-in, and CUDA look present with one device of
    `device_bytes` (an H200's 140 GiB by default) whose memory is the ledger, for one test; a
    shut-down engine's share shows as free `lag` mem_get_info polls later."""
    global DEVICE
    module = types.ModuleType("vllm")
    module.__spec__ = importlib.machinery.ModuleSpec("vllm", None)
    module.LLM, module.SamplingParams = LLM, SamplingParams
    monkeypatch.setitem(sys.modules, "vllm", module)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    DEVICE = Device(device_bytes, lag)
    monkeypatch.delenv("VLLM_ALLOW_INSECURE_SERIALIZATION", raising=False)  # vLLM's default: msgpack only
    monkeypatch.setattr("backend.rollout.vllm_engine._closed", [])  # a new device: no engine closed on it yet
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: DEVICE.mem_get_info(device))
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: EVENTS.append(("empty_cache",)))
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: None)  # nothing runs asynchronously here
    LLM.instances.clear()
    EVENTS.clear()
    LLM.reset_result = True
    return module


def signature_of(cls, method: str) -> list[str]:
    return list(inspect.signature(getattr(cls, method)).parameters)


def install_in_ray_worker() -> None:
    """Ray's worker_process_setup_hook: the stand-in (and a CUDA that looks present) in every worker
    process, so engine actors on a fake-GPU local cluster build it as they would build vLLM."""
    module = types.ModuleType("vllm")
    module.__spec__ = importlib.machinery.ModuleSpec("vllm", None)
    module.LLM, module.SamplingParams = LLM, SamplingParams
    sys.modules["vllm"] = module
    torch.cuda.is_available = lambda: True
    # the device ledger too: an actor that closes one engine and builds the next asks for free memory
    torch.cuda.mem_get_info = lambda device=None: DEVICE.mem_get_info(device)
    torch.cuda.empty_cache = lambda: EVENTS.append(("empty_cache",))
    torch.cuda.synchronize = lambda device=None: None
