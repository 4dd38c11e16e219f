"""A strict stand-in for an OpenAI-compatible server as vLLM 0.31.0 serves it: it refuses (400, in
vLLM's error shape) every request that vLLM's protocol refuses (tests/rollout/openai_rules.py), and
answers the rest as vLLM does in shape: `choices[0]` with `text` or `message`, `finish_reason`,
vLLM's `stop_reason` with the matched stop string trimmed from the text, and `usage`.

It stands in for the model only: a completion is a function of (prompt, seed, model name), so two
samples that share a seed collide visibly (`noise=`), and the tool setting gets a tool call on its
first turn. A stand-in may replace the server only to test the logic around it; the real server
these tests also run is `transformers serve` (tests/rollout/test_transformers_serve.py).

In-process (`StandIn().start()`) it records every request and can fail on purpose (`faults`: 429,
500, or "drop" to close the connection unanswered). As a program (`python -m
tests.rollout.openai_standin --model M --port P`) it is what a `--serve` template starts.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.rollout.openai_rules import Refused, check

MAX_MODEL_LEN = 100_000  # tokens, counted as words here


def noise(seed: int | None) -> str:
    return hashlib.sha256(f"seed:{seed}".encode()).hexdigest()[:8]


def answer(body: dict, model: str) -> tuple[str, str, str | None]:
    """(text, finish_reason, stop_reason) for one request: deterministic in (prompt, seed, model)."""
    prompt = body.get("prompt") if "prompt" in body else json.dumps(body["messages"])
    tag = hashlib.sha256(f"{model}|{prompt}|{body.get('seed')}".encode()).hexdigest()
    value = int(tag[:6], 16) % 5
    stops = [body["stop"]] if isinstance(body.get("stop"), str) else list(body.get("stop") or [])
    if "messages" in body:
        first_turn = not any(m.get("role") == "tool" for m in body["messages"])
    else:
        first_turn = "\n\nOutput:\n" not in body["prompt"]  # prompts.OUTPUT_CUE: a tool's output came back
    if "</submit>" in stops:  # agentic: write the program in the terminal, then submit it
        command = f"<bash>printf 'print({value})\\n' > s.py</bash>" if first_turn else "<submit>s.py</submit>"
        text = f"noise={noise(body.get('seed'))} {command}"
    elif "</tool_call>" in stops and first_turn:
        call = json.dumps({"name": "python", "arguments": {"code": f"print({value})"}})
        text = f"noise={noise(body.get('seed'))} let me check.\n<tool_call>{call}</tool_call>"
    else:
        text = f"noise={noise(body.get('seed'))} model={model[-12:]}\n```python\nprint({value})\n```\n"
    for s in stops:  # vLLM trims the stop string unless include_stop_str_in_output, and names it in stop_reason
        if s in text:
            cut = text.index(s)
            kept = text[: cut + len(s)] if body.get("include_stop_str_in_output") else text[:cut]
            return kept, "stop", s
    limit = body.get("max_completion_tokens") or body.get("max_tokens") or 16
    words = text.split(" ")
    if len(words) > limit:
        return " ".join(words[:limit]), "length", None
    return text, "stop", None


class StandIn:
    def __init__(
        self, model: str = "stand-in", port: int = 0, host: str = "127.0.0.1", max_model_len: int = MAX_MODEL_LEN
    ):
        self.model, self.max_model_len = model, max_model_len
        self.requests: list[tuple[str, dict]] = []
        self.faults: list[str] = []  # consumed one per request: "429", "500" or "drop"
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer((host, port), self._handler())
        self.server.daemon_threads = True

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> StandIn:
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def respond(self, path: str, body) -> tuple[int, dict | None]:
        with self.lock:
            self.requests.append((path, body))
            fault = self.faults.pop(0) if self.faults else None
        if fault == "drop":
            return 0, None
        if fault in ("429", "500"):
            return int(fault), {"error": {"message": f"stand-in fault {fault}", "type": "Error", "code": int(fault)}}
        try:
            req = check(path, body)
        except Refused as exc:
            return 400, {"error": {"message": str(exc), "type": "BadRequestError", "param": None, "code": 400}}
        if req.model not in (None, self.model):
            return 404, {"error": {"message": f"The model `{req.model}` does not exist.", "type": "NotFoundError",
                                   "param": "model", "code": 404}}  # fmt: skip
        prompt_tokens = len((body.get("prompt") or json.dumps(body.get("messages"))).split())
        wanted = body.get("max_completion_tokens") or body.get("max_tokens") or 16
        if prompt_tokens + wanted > self.max_model_len:
            message = (f"This model's maximum context length is {self.max_model_len} tokens. However, you requested "
                       f"{wanted} output tokens and your prompt contains {prompt_tokens} input tokens")  # fmt: skip
            return 400, {"error": {"message": message, "type": "BadRequestError", "param": "input_tokens", "code": 400}}
        text, finish, stop_reason = answer(body, self.model)
        choice = {"index": 0, "finish_reason": finish, "stop_reason": stop_reason}
        if path.endswith("/chat/completions"):
            choice["message"] = {"role": "assistant", "content": text, "reasoning": None}
        else:
            choice["text"] = text
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": len(text.split()),
                 "total_tokens": prompt_tokens + len(text.split())}  # fmt: skip
        return 200, {"id": "cmpl-standin", "object": "chat.completion", "created": 0, "model": self.model,
                     "choices": [choice], "usage": usage}  # fmt: skip

    def _handler(self):
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if self.path == "/v1/models":
                    # owned_by: the GPUs this process was given (a job's lease passes CUDA_VISIBLE_DEVICES on)
                    owner = os.environ.get("CUDA_VISIBLE_DEVICES", "unset")
                    model = {"id": standin.model, "object": "model", "owned_by": owner}
                    self._send(200, {"object": "list", "data": [model]})
                elif self.path == "/health":
                    self._send(200, {})
                else:
                    self._send(404, {"detail": "Not Found"})

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError:
                    self._send(400, {"error": {"message": "invalid JSON", "type": "BadRequestError", "code": 400}})
                    return
                status, payload = standin.respond(self.path, body)
                if status == 0:  # "drop": close without an answer, as a dying server does
                    self.close_connection = True
                    return
                self._send(status, payload)

        return Handler


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--die-after", type=int, default=0, help="exit abruptly after N requests, once per --marker")
    parser.add_argument("--marker", default="", help="a file: present, the stand-in has died already and lives on")
    args = parser.parse_args()
    standin = StandIn(args.model, args.port, args.host)
    if args.die_after and not os.path.exists(args.marker):
        open(args.marker, "w").close()
        respond = standin.respond

        def dying(path, body):  # the N-th request kills the server, as a crash mid-point does
            if len(standin.requests) + 1 >= args.die_after:
                os._exit(1)
            return respond(path, body)

        standin.respond = dying
    print(f"stand-in serving {args.model} on {standin.url}", flush=True)
    standin.server.serve_forever()


if __name__ == "__main__":
    main()
