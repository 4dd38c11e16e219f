"""A strict stand-in for the part of vLLM's offline API that frontier-lab calls.

Signatures are those of vLLM 0.31.0 (the version requirements-gpu.txt pins), read from its wheel:
`LLM.__init__` (keyword-only options; the rest go to EngineArgs, of which only real field names are
accepted here), `LLM.chat`, `LLM.collective_rpc`, `LLM.reset_prefix_cache`, `LLM.get_tokenizer`,
`llm_engine.model_config.max_model_len` and `SamplingParams` (its field names; greedy with n > 1 is
refused with vLLM's message). It refuses any other argument, a list of SamplingParams whose length
is not the number of conversations, and a prompt longer than max_model_len, as vLLM does.

It stands in for the *model* only: a completion's text is a function of (prompt, seed, index), and
the worker holds a Qwen2 in vLLM's fused layout (qkv_proj, gate_up_proj) whose load_weights takes
Hugging Face names, as vLLM's does. Nothing here is vLLM's code.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import inspect
import sys
import types
from dataclasses import dataclass
from typing import ClassVar

import torch

ENGINE_ARGS = {"max_model_len", "enable_prefix_caching", "disable_log_stats", "worker_cls", "worker_extension_cls"}
SAMPLING_FIELDS = {
    "n", "presence_penalty", "frequency_penalty", "repetition_penalty", "temperature", "top_p", "top_k", "min_p",
    "seed", "stop", "stop_token_ids", "ignore_eos", "max_tokens", "min_tokens", "logprobs", "prompt_logprobs",
    "detokenize", "skip_special_tokens", "spaces_between_special_tokens", "include_stop_str_in_output",
    "output_kind", "structured_outputs", "logit_bias", "allowed_token_ids", "extra_args", "bad_words",
}  # fmt: skip
EVENTS: list[tuple] = []  # what the fake engine was asked to do, for the tests


class VLLMValidationError(Exception):
    pass


class SamplingParams:
    def __init__(self, **fields):
        unknown = set(fields) - SAMPLING_FIELDS
        if unknown:
            raise TypeError(f"SamplingParams got unexpected keyword arguments {sorted(unknown)}")
        self.n, self.temperature, self.seed = fields.get("n", 1), fields.get("temperature", 1.0), fields.get("seed")
        self.max_tokens, self.stop = fields.get("max_tokens", 16), fields.get("stop")
        if self.temperature < 1e-5 and self.n > 1:
            raise VLLMValidationError(f"n must be 1 when using greedy sampling, got {self.n}.")


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


class _Engine:
    def __init__(self, max_model_len: int):
        self.model_config = _ModelConfig(max_model_len)


class LLM:
    instances: ClassVar[list[LLM]] = []
    reset_result = True  # set False to see the caller refuse a failed prefix-cache reset

    def __init__(self, model: str, *, tokenizer=None, seed: int = 0, gpu_memory_utilization: float = 0.92,
                 dtype="auto", enforce_eager: bool = False, tensor_parallel_size: int = 1, **kwargs):  # fmt: skip
        unknown = set(kwargs) - ENGINE_ARGS
        if unknown:
            raise TypeError(f"EngineArgs.__init__() got unexpected keyword arguments {sorted(unknown)}")
        from safetensors.torch import load_file
        from transformers import AutoTokenizer

        self.model_path, self.kwargs = model, kwargs
        self.gpu_memory_utilization = gpu_memory_utilization
        self.tokenizer = AutoTokenizer.from_pretrained(tokenizer or model)
        config = __import__("json").loads((__import__("pathlib").Path(model) / "config.json").read_text())
        self.llm_engine = _Engine(
            kwargs.get("max_model_len") or config["max_position_embeddings"]
        )  # as vLLM derives it
        worker_cls = type("Worker", (_worker_extension(kwargs.get("worker_extension_cls")),), {})
        self.worker = worker_cls()
        state = {}
        for f in sorted(__import__("pathlib").Path(model).glob("*.safetensors")):
            state.update(load_file(str(f)))
        self.worker.model_runner = _ModelRunner(FusedQwen2(state))
        LLM.instances.append(self)

    def get_tokenizer(self, lora_request=None):
        return self.tokenizer

    def chat(self, messages, sampling_params=None, use_tqdm=True, lora_request=None, chat_template=None,
             chat_template_content_format="auto", add_generation_prompt=True, continue_final_message=False,
             tools=None, chat_template_kwargs=None, tokenization_kwargs=None, mm_processor_kwargs=None):  # fmt: skip
        conversations = [messages] if messages and isinstance(messages[0], dict) else list(messages)
        params = (
            sampling_params if isinstance(sampling_params, list | tuple) else [sampling_params] * len(conversations)
        )
        if len(params) != len(conversations):
            raise ValueError("The lengths of prompts and sampling_params must be the same.")
        out = []
        for conv, p in zip(conversations, params, strict=True):
            ids = self.tokenizer.apply_chat_template(conv, tokenize=True, add_generation_prompt=True)
            ids = ids if isinstance(ids, list) else ids["input_ids"]
            limit = self.llm_engine.model_config.max_model_len
            if len(ids) >= limit:
                raise VLLMValidationError(
                    f"The decoder prompt (length {len(ids)}) is longer than the maximum model length of {limit}."
                )
            EVENTS.append(("request", p.seed, p.n))
            outputs = []
            for k in range(p.n):
                digest = hashlib.sha256(f"{ids}|{p.seed}|{k}|{self._weights_digest()}".encode()).hexdigest()[:8]
                outputs.append(CompletionOutput(k, f"sample {digest}\n```python\nprint({k})\n```", [1, 2, 3], "stop"))
            out.append(RequestOutput(list(ids), outputs))
        return out

    def _weights_digest(self) -> str:
        first = next(self.worker.model_runner.model.parameters())
        return f"{float(first.float().sum()):.6f}"

    def collective_rpc(
        self, method, timeout: float | None = None, args: tuple = (), kwargs: dict | None = None
    ) -> list:
        EVENTS.append(("rpc", method))
        fn = getattr(self.worker, method) if isinstance(method, str) else method.__get__(self.worker)
        return [fn(*args, **(kwargs or {}))]

    def reset_prefix_cache(self, reset_running_requests: bool = False, reset_connector: bool = False) -> bool:
        EVENTS.append(("reset_prefix_cache",))
        return LLM.reset_result


def _worker_extension(qualified: str | None) -> type:
    if not qualified:
        return object
    module, _, name = qualified.rpartition(".")
    return getattr(importlib.import_module(module), name)


def install(monkeypatch) -> types.ModuleType:
    """Make `import vllm` give this stand-in, and CUDA look present, for one test."""
    module = types.ModuleType("vllm")
    module.__spec__ = importlib.machinery.ModuleSpec("vllm", None)
    module.LLM, module.SamplingParams = LLM, SamplingParams
    monkeypatch.setitem(sys.modules, "vllm", module)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
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
