"""The OpenAI API as vLLM 0.31.0 serves it, for the fields frontier-lab's `openai` engine may send
and read: the request models' declarations (pydantic, lax, extra fields allowed as vLLM's
OpenAIBaseModel allows them), their "before" validators, and SamplingParams' checks that a request
reaches. Read from vLLM 0.31.0's wheel (file:line there); nothing here is vLLM's code.

- entrypoints/openai/completion/protocol.py:46-90 CompletionRequest (prompt, logprobs: int,
  max_tokens: int = 16, n: int = 1, seed within int64 (:43-44, :64), stop: StopParam);
  :473-535 check_logprobs;
- entrypoints/openai/chat_completion/protocol.py:213-278 ChatCompletionRequest (messages, logprobs:
  bool, top_logprobs: int, max_tokens (deprecated) and max_completion_tokens, n: int | None = 1,
  seed within int64); :782-836 check_logprobs;
- entrypoints/chat_utils.py:360-396: a message is OpenAI's or a custom one (role required, content
  str or parts, name, tool_call_id, tool_calls, reasoning);
- entrypoints/generate/base/protocol.py:25-27: stop is a string or at most VLLM_MAX_STOP_STRINGS (4,
  envs.py:114) strings;
- sampling_params.py:35-47 n an int ≥ 1; :571-704 temperature finite in [0, 2], top_p in (0, 1],
  max_tokens ≥ 1, logprobs ≥ 0 or -1, no empty stop string; :549-554 with :703-707 greedy (T < 1e-5)
  refuses n > 1; serve/engine/protocol.py:37-39 extra fields allowed (and ignored).

Responses: chat_completion/protocol.py:62-78 ChatMessage (content, tool_calls, reasoning), :97-118
choice (finish_reason, stop_reason), completion/protocol.py:613-627; usage: serve/engine/protocol.py:135-140.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
MAX_STOP_STRINGS = 4
SAMPLING_EPS = 1e-5
StopParam = str | Annotated[list[str], Field(max_length=MAX_STOP_STRINGS)] | None


class Refused(Exception):
    """What vLLM answers with 400: a validation error of the request."""


class OpenAIBaseModel(BaseModel):
    model_config = ConfigDict(extra="allow")


class Message(OpenAIBaseModel):  # CustomChatCompletionMessageParam, the widest of the union
    role: str
    content: str | list[dict] | None = None
    name: str | None = None
    tool_call_id: str | None = None
    tool_calls: list[dict] | None = None
    reasoning: str | None = None


class CompletionRequest(OpenAIBaseModel):
    model: str | None = None
    prompt: list[Annotated[int, Field(ge=0)]] | list[list[Annotated[int, Field(ge=0)]]] | str | list[str] | None = None
    echo: bool | None = False
    frequency_penalty: float | None = None
    logit_bias: dict[str, float] | None = None
    logprobs: int | None = None
    max_tokens: int | None = 16
    n: int = 1
    presence_penalty: float | None = None
    seed: int | None = Field(None, ge=INT64_MIN, le=INT64_MAX)
    stop: StopParam = []
    stream: bool | None = False
    suffix: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    user: str | None = None
    top_k: int | None = None
    min_p: float | None = None
    repetition_penalty: float | None = None
    include_stop_str_in_output: bool = False
    ignore_eos: bool = False
    min_tokens: int = 0

    @model_validator(mode="before")
    @classmethod
    def check_logprobs(cls, data: Any) -> Any:
        logprobs = data.get("logprobs") if isinstance(data, dict) else None
        if isinstance(logprobs, (int, float)) and logprobs < 0 and logprobs != -1:
            raise ValueError("`logprobs` must be a positive value or -1.")
        return data


class ChatCompletionRequest(OpenAIBaseModel):
    messages: list[Message]
    model: str | None = None
    frequency_penalty: float | None = None
    logit_bias: dict[str, float] | None = None
    logprobs: bool | None = False
    top_logprobs: int | None = 0
    max_tokens: int | None = None
    max_completion_tokens: int | None = None
    n: int | None = 1
    presence_penalty: float | None = None
    seed: int | None = Field(None, ge=INT64_MIN, le=INT64_MAX)
    stop: StopParam = []
    stream: bool | None = False
    temperature: float | None = None
    top_p: float | None = None
    user: str | None = None
    top_k: int | None = None
    min_p: float | None = None
    repetition_penalty: float | None = None
    include_stop_str_in_output: bool = False
    ignore_eos: bool = False
    min_tokens: int = 0

    @model_validator(mode="before")
    @classmethod
    def check_logprobs(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        top = data.get("top_logprobs")
        if top is not None and not isinstance(top, (int, float)):
            raise ValueError("`top_logprobs` must be an integer.")
        if top is not None:
            if top < 0 and top != -1:
                raise ValueError("`top_logprobs` must be a positive value or -1.")
            if (top == -1 or top > 0) and not data.get("logprobs"):
                raise ValueError("when using `top_logprobs`, `logprobs` must be set to true.")
        return data


def sampling_checks(req: CompletionRequest | ChatCompletionRequest) -> None:
    """SamplingParams.__post_init__ and _verify_args on what the request asks (defaults: temperature 1, top_p 1)."""
    n = 1 if req.n is None else req.n
    if not isinstance(n, int) or n < 1:
        raise Refused(f"n must be at least 1, got {n}.")
    temperature = 1.0 if req.temperature is None else req.temperature
    top_p = 1.0 if req.top_p is None else req.top_p
    if not math.isfinite(temperature) or not 0.0 <= temperature <= 2.0:
        raise Refused(f"temperature must be in [0, 2], got {temperature}.")
    if not 0.0 < top_p <= 1.0:
        raise Refused(f"top_p must be in (0, 1], got {top_p}.")
    max_tokens = req.max_completion_tokens if isinstance(req, ChatCompletionRequest) else None
    max_tokens = max_tokens if max_tokens is not None else req.max_tokens
    if max_tokens is not None and max_tokens < 1:
        raise Refused(f"max_tokens must be at least 1, got {max_tokens}.")
    stops = [req.stop] if isinstance(req.stop, str) else (req.stop or [])
    if any(not s for s in stops):
        raise Refused("stop cannot contain an empty string.")
    if temperature < SAMPLING_EPS and n > 1:
        raise Refused(f"n must be 1 when using greedy sampling, got {n}.")


def check(path: str, body: Any) -> CompletionRequest | ChatCompletionRequest:
    """The request as vLLM reads it, or Refused with the reason vLLM gives (its 400)."""
    model = ChatCompletionRequest if path.endswith("/chat/completions") else CompletionRequest
    if not isinstance(body, dict):
        raise Refused("the request body is not a JSON object")
    try:
        req = model.model_validate(body)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise Refused(f"{'.'.join(map(str, err['loc']))}: {err['msg']}") from None
    if model is CompletionRequest and req.prompt is None:
        raise Refused("Either prompt or prompt_embeds must be provided and non-empty.")
    sampling_checks(req)
    return req
