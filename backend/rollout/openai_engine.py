"""The `openai` engine: samples from an OpenAI-compatible server (`vllm serve`, SGLang, `transformers
serve`, TGI), one the user runs (`server_url`) or one the job starts per checkpoint (`--serve`,
backend/rollout/servers.py).

Requests (checked against vLLM 0.31.0's protocol, entrypoints/openai/{chat_completion,completion}/
protocol.py, in tests/rollout/openai_rules.py):
- a chat prompt (messages) goes to /v1/chat/completions with `max_completion_tokens`, a plain one
  to /v1/completions with `max_tokens`; both carry temperature, top_p, stop and a `seed`;
- one request per sample, n = 1, sample k of a prompt whose first seed is s carrying seed s + k:
  the seed a vLLM request with n samples gives its k-th child (v1/engine/parallel_sampling.py:69-81),
  so the run's seed rule (rollout/spec.py seed_of) holds on any server, including those that ignore
  `n` (transformers serve); greedy decoding (T = 0) is one request, copied n times;
- at most `concurrency` requests in flight; the OpenAI client retries 408/409/429/5xx and connection
  errors with exponential backoff, each try bounded by `request_timeout_s`.

A response becomes the text the model wrote: a chat message's `reasoning` (vLLM) or
`reasoning_content` is put back in front as <think>…</think>, tool calls a server parsed out are
written back in the Hermes form the tool setting reads, and a stop string a server trimmed is put
back from its `stop_reason` (vLLM, SGLang); `transformers serve` echoes the rendered prompt in
front of a chat answer when the checkpoint's chat template is not its model family's, and that
echo is cut. Token counts come from `usage`, the finish reason from `finish_reason`; a request the
server refuses as longer than its context is that sample's format failure ("context_too_long").

A server the job started that dies is started again (at most MAX_RESTARTS times per checkpoint)
and the batch's unanswered requests are sent again with their seeds; nothing of the batch was
stored, so the point resumes exactly where it was.
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor

from backend.errors import UserError
from backend.rollout.server_options import ServerOptions, parse_extra_body
from backend.rollout.servers import ServerProcess, ready, root_url
from backend.rollout.spec import Completion, SamplingSpec, seed_of

MAX_RESTARTS = 3
MAX_RETRIES = 4  # the OpenAI client's, per request: 0.5 s, 1 s, 2 s, 4 s apart (plus jitter)
CONTEXT_WORDS = ("maximum context length", "context length", "too long")


class ServerUnavailable(Exception):
    """The server stopped answering (connection refused, 5xx or time-outs past the client's retries)."""


def request_body(
    model: str, prompt: list[dict] | str, spec: SamplingSpec, seed: int, extra: dict | None = None
) -> dict:
    """One request for one sample: chat completions for messages, completions for a plain prompt."""
    body: dict = {"model": model, "temperature": spec.temperature, "top_p": spec.top_p, "seed": int(seed)}
    if isinstance(prompt, str):
        body |= {"prompt": prompt, "max_tokens": spec.max_tokens}
    else:
        body |= {"messages": prompt, "max_completion_tokens": spec.max_tokens}
    if spec.stop:
        body["stop"] = list(spec.stop)
    return body | (extra or {})


class OpenAIEngine:
    def __init__(
        self,
        checkpoint: str,
        options: ServerOptions,
        *,
        seed: int = 0,
        tensor_parallel_size: int = 1,
        echo_server_log: bool = True,
    ):
        self.checkpoint, self.options = checkpoint, options
        self.extra = parse_extra_body(options.extra_body)
        self.server: ServerProcess | None = None
        self.restarts = 0
        self._tokenizer = None
        if options.serve:
            self.server = ServerProcess(
                options.serve,
                checkpoint,
                seed=seed,
                tensor_parallel_size=tensor_parallel_size,
                start_timeout_s=options.server_start_timeout_s,
                echo=echo_server_log,
            ).start()
            self.url = self.server.url
        else:
            self.url = root_url(options.server_url or "")
            if not ready(self.url):
                raise UserError(f"server_url {self.url}: no OpenAI-compatible server answers on /v1/models")
        try:
            self.client = self._client()
            self.model = self._served_model()
        except BaseException:
            self.close()
            raise

    def _client(self):
        from openai import OpenAI

        key = "EMPTY"  # vLLM's and SGLang's word for "no key"; the client needs one
        if self.options.api_key_env:
            key = os.environ.get(self.options.api_key_env) or ""
            if not key:
                raise UserError(f"api_key_env {self.options.api_key_env}: that environment variable is not set")
        return OpenAI(
            base_url=f"{self.url}/v1",
            api_key=key,
            max_retries=MAX_RETRIES,
            timeout=self.options.request_timeout_s,
        )

    def _served_model(self) -> str:
        """The model name requests carry: the server's only model, else the one named like the checkpoint."""
        ids = [m["id"] for m in self.client.get("/models", cast_to=object).get("data", [])]
        if len(ids) == 1:
            return ids[0]
        if self.checkpoint in ids:
            return self.checkpoint
        raise UserError(
            f"the server at {self.url} serves {len(ids)} models ({', '.join(ids[:5]) or 'none'}); "
            f"serve {self.checkpoint} alone, or under its folder's name"
        )

    def alpha_switch(self, low: str, high: str):
        raise UserError("engine openai samples the weights its server loaded: turn live_switch off (merged folders)")

    def close(self) -> None:
        if self.server is not None:
            server, self.server = self.server, None
            server.stop()

    def generate(
        self, prompts: list[list[dict] | str], spec: SamplingSpec, seeds: list[int] | None = None
    ) -> list[list[Completion]]:
        seeds = seeds if seeds is not None else [seed_of(spec.seed, i, spec.n) for i in range(len(prompts))]
        per_prompt = 1 if spec.greedy else spec.n
        calls = [(i, seeds[i] + k) for i in range(len(prompts)) for k in range(per_prompt)]
        answers: dict[int, Completion] = {}
        while True:
            todo = [c for c in range(len(calls)) if c not in answers]
            failure = self._send(prompts, spec, calls, todo, answers)
            if failure is None:
                break
            self._recover(failure)
        out = []
        for i in range(len(prompts)):
            done = [answers[c] for c, (p, _) in enumerate(calls) if p == i]
            out.append(done * spec.n if spec.greedy else done)
        return out

    def _send(self, prompts, spec, calls, todo, answers) -> ServerUnavailable | None:
        """The calls `todo`, `concurrency` at a time, into `answers`; the first failure of the server, if any."""

        def one(c: int):
            i, seed = calls[c]
            try:
                answers[c] = self.request(prompts[i], spec, seed)
            except ServerUnavailable as exc:
                return exc
            return None

        with ThreadPoolExecutor(max(1, min(self.options.concurrency, len(todo) or 1))) as pool:
            failures = [f for f in pool.map(one, todo) if f is not None]
        return failures[0] if failures else None

    def _recover(self, failure: ServerUnavailable) -> None:
        """A server the job started is started again; a user's server is the user's to bring back."""
        if self.server is None:
            raise UserError(
                f"the server at {self.url} stopped answering ({failure}); bring it back, then resume the job "
                "(python -m backend jobs resume JOB): what was stored stays"
            )
        if self.restarts >= MAX_RESTARTS:
            raise UserError(
                f"--serve: the server stopped answering {self.restarts + 1} times on this checkpoint ({failure}); "
                f"its log ends: {self.server.tail()}"
            )
        self.restarts += 1
        print(f"[server] not answering ({failure}); starting it again ({self.restarts}/{MAX_RESTARTS})", flush=True)
        self.server.stop()
        self.server.start()
        self.url = self.server.url
        self.client = self.client.with_options(base_url=f"{self.url}/v1")

    def request(self, prompt: list[dict] | str, spec: SamplingSpec, seed: int) -> Completion:
        """One sample: the request, and the completion as the model wrote it."""
        import openai

        body = request_body(self.model, prompt, spec, seed, self.extra)
        path = "/completions" if isinstance(prompt, str) else "/chat/completions"
        began = time.perf_counter()
        try:
            data = self.client.post(path, body=body, cast_to=object)
        except (openai.APIConnectionError, openai.InternalServerError, openai.RateLimitError) as exc:
            raise ServerUnavailable(_short(exc)) from None
        except openai.APIStatusError as exc:
            message = _message(exc)
            if exc.status_code == 400 and any(w in message.lower() for w in CONTEXT_WORDS):
                return Completion("", 0, 0, "context_too_long", 0.0, seed)
            raise UserError(f"the server at {self.url} refused a request ({exc.status_code}): {message}") from None
        latency = time.perf_counter() - began
        return self.completion(data, prompt, spec, seed, latency)

    def completion(self, data: dict, prompt, spec: SamplingSpec, seed: int, latency: float) -> Completion:
        try:
            choice = data["choices"][0]
        except (KeyError, IndexError, TypeError):
            raise UserError(f"the server at {self.url} answered without a choice: {str(data)[:200]}") from None
        if isinstance(prompt, str):
            text = choice.get("text") or ""
        else:
            text = self.message_text(choice.get("message") or {}, prompt)
        text = with_stop(text, spec.stop, choice.get("stop_reason"))
        usage = data.get("usage") or {}
        finish = "length" if choice.get("finish_reason") == "length" else "stop"
        prompt_tokens, completion_tokens = usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0
        return Completion(text, int(prompt_tokens), int(completion_tokens), finish, latency, seed)

    def message_text(self, message: dict, messages: list[dict]) -> str:
        """A chat message as the model wrote it: its reasoning, its content, its tool calls."""
        content = self._without_echo(message.get("content") or "", messages)
        reasoning = message.get("reasoning") or message.get("reasoning_content")
        text = f"<think>\n{reasoning}\n</think>\n\n{content}" if reasoning else content
        for call in message.get("tool_calls") or []:
            fn = call.get("function") or {}
            try:
                arguments = json.loads(fn.get("arguments") or "{}")
            except (json.JSONDecodeError, TypeError):
                arguments = fn.get("arguments")
            text += "<tool_call>\n" + json.dumps({"name": fn.get("name"), "arguments": arguments}) + "\n</tool_call>"
        return text

    def _without_echo(self, content: str, messages: list[dict]) -> str:
        """transformers serve (5.24) puts the rendered prompt in front of a chat answer when the
        checkpoint's chat template lacks its model family's assistant marker (its response parser
        keeps what precedes an anchor it cannot find): cut it."""
        tokenizer = self._chat_tokenizer()
        if tokenizer is None:
            return content
        rendered = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        for echo in (rendered, tokenizer.decode(tokenizer(rendered, add_special_tokens=False)["input_ids"])):
            if echo and content.startswith(echo):
                return content[len(echo) :]
        return content

    def _chat_tokenizer(self):
        if self._tokenizer is None:
            try:
                from transformers import AutoTokenizer

                self._tokenizer = AutoTokenizer.from_pretrained(self.checkpoint)
            except (OSError, ValueError):
                self._tokenizer = False  # not a folder here: nothing to compare with
        return self._tokenizer or None


def with_stop(text: str, stop: tuple[str, ...], stop_reason) -> str:
    """The text up to and including the first stop string, as the other engines keep it: a server
    that generated past one (whole tokens) is cut there, one that trimmed it (vLLM without
    include_stop_str_in_output, SGLang) gets back the string its `stop_reason` names."""
    if not stop:
        return text
    hits = [(text.find(s), s) for s in stop if s in text]
    if hits:
        at, s = min(hits)
        return text[: at + len(s)]
    return text + stop_reason if isinstance(stop_reason, str) and stop_reason in stop else text


def _message(exc) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        text = inner.get("message") or inner.get("detail") if isinstance(inner, dict) else inner
        if text:
            return " ".join(str(text).split())[:300]
    return _short(exc)


def _short(exc) -> str:
    return " ".join(str(exc).split())[:200] or type(exc).__name__
