"""The three inference settings (docs/method.md): reasoning (one turn), tool use (Python runs in the
sandbox) and agentic (a persistent sandboxed terminal with a `submit` action).

Multi-turn rollouts batch across conversations: each turn generates for every live conversation
in one engine call, then runs their tool calls in parallel, then continues.

Tool-call format (Hermes/Qwen style): <tool_call>{"name": "python", "arguments": {"code": "..."}}</tool_call>
Agentic actions: <bash>COMMAND</bash> and <submit>FILE</submit>.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from backend.grading.limits import JudgeLimits
from backend.rollout.prompts import render
from backend.rollout.spec import Episode, SamplingSpec, SettingLimits, Turn, seed_of
from backend.sandbox.backends import SandboxError, Session, open_session
from backend.sandbox.result import RunResult, TestLimits

if TYPE_CHECKING:  # engines import torch; settings only name the protocol
    from backend.rollout.engines import Engine

TOOL_CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)
BASH = re.compile(r"<bash>(.*?)</bash>", re.DOTALL)
SUBMIT = re.compile(r"<submit>(.*?)</submit>", re.DOTALL)


def truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n... [{len(text) - limit} characters cut] ...\n{text[-half:]}"


def _describe(res: RunResult, limits: SettingLimits) -> str:
    """What the model reads back: output, errors and why a command stopped, truncated."""
    parts = [res.stdout]
    if res.stderr:
        parts.append(f"[stderr]\n{res.stderr}")
    if res.wall_backstop_fired or res.cpu_s > limits.command_time_s:
        parts.append(f"[killed: over the {limits.command_time_s:g}s limit]")
    elif res.signal is not None:
        parts.append(f"[killed by signal {res.signal}]")
    elif res.exit_code:
        parts.append(f"[exit code {res.exit_code}]")
    return truncate("\n".join(p for p in parts if p), limits.output_chars)


def _command_limits(limits: SettingLimits) -> TestLimits:
    return JudgeLimits(
        time_limit_s=limits.command_time_s, memory_mb=limits.command_memory_mb, wall_factor=2.0
    ).for_test()


def run_python(code: str, limits: SettingLimits, backend: str = "bwrap") -> tuple[str, float]:
    """One tool call: the code runs in a fresh sandbox. Returns (output for the model, CPU seconds)."""
    session = open_session(backend, allow_none=backend == "none")
    try:
        loaded = session.load("python", code, JudgeLimits().for_compile())
        if not loaded.ok:
            return truncate(loaded.error or "syntax error", limits.output_chars), 0.0
        lim = _command_limits(limits)
        res = session.run(lim)
        return _describe(res, limits), res.cpu_s
    except SandboxError as exc:
        return f"[sandbox error: {exc}]", 0.0
    finally:
        session.close()


@dataclass
class _State:
    messages: list[dict]
    episode: Episode
    session: Session | None = None
    cpu_used: float = 0.0
    done: bool = False
    action: tuple[str, str] | None = None  # (kind, payload) waiting to run
    pending: list = field(default_factory=list)
    conversation: int = 0  # which conversation of the call, and which of its n samples: the seed's coordinates
    sample: int = 0


def run_episodes(
    engine: Engine,
    conversations: list[list[dict]],
    setting: str,
    spec: SamplingSpec,
    limits: SettingLimits = SettingLimits(),
    backend: str = "bwrap",
    prompt_format: str = "chat",
) -> list[list[Episode]]:
    """spec.n episodes per conversation, in the given setting; prompts in `prompt_format` (chat:
    the messages, plain: prompts.render_plain). Conversation i's samples take the seeds seed_of(
    spec.seed, i, n, k, turn): none is shared within the call (spec.from_conversation continues
    them across calls)."""
    if setting == "reasoning":
        prompts = [render(c, setting, prompt_format) for c in conversations]
        return [
            [_one_turn(conv, c) for c in comps]
            for conv, comps in zip(conversations, engine.generate(prompts, spec), strict=True)
        ]
    states = [
        _State(
            [dict(m) for m in conv],
            Episode([Turn(m["role"], m["content"]) for m in conv], ""),
            conversation=i,
            sample=k,
        )
        for i, conv in enumerate(conversations)
        for k in range(spec.n)
    ]
    try:
        _multi_turn(engine, states, setting, spec, limits, backend, prompt_format)
    finally:
        for s in states:
            if s.session:
                s.session.close()
    return [[s.episode for s in states[i * spec.n : (i + 1) * spec.n]] for i in range(len(conversations))]


def _one_turn(conversation: list[dict], c) -> Episode:
    turns = [Turn(m["role"], m["content"]) for m in conversation] + [
        Turn("assistant", c.text, seconds=c.latency_s, seed=c.seed)
    ]
    return Episode(turns, c.text, c.prompt_tokens, c.completion_tokens, c.finish_reason, c.latency_s)


def _multi_turn(engine, states, setting, spec, limits, backend, prompt_format) -> None:
    stop = ("</tool_call>",) if setting == "tool" else ("</bash>", "</submit>")
    for turn in range(limits.max_turns):
        live = [s for s in states if not s.done]
        if not live:
            return
        budget = min(spec.max_tokens, min(limits.max_episode_tokens - s.episode.completion_tokens for s in live))
        turn_spec = spec.model_copy(update={"n": 1, "stop": stop, "max_tokens": max(1, budget)})
        prompts = [render(s.messages, setting, prompt_format) for s in live]
        seeds = [seed_of(spec.seed, s.conversation, spec.n, s.sample, turn) for s in live]
        for s, (c,) in zip(live, engine.generate(prompts, turn_spec, seeds), strict=True):
            _record_assistant(s, c, setting, limits)
        acting = [s for s in live if s.action]
        for s in acting:
            # bwrap's --die-with-parent fires when the spawning *thread* ends, so a terminal that
            # must outlive this turn's worker threads is opened here, on the calling thread
            if setting == "agentic" and s.session is None:
                s.session = _open_terminal(backend)
        with ThreadPoolExecutor(max(1, min(8, len(acting)))) as pool:
            list(pool.map(lambda s: _act(s, setting, limits, backend), acting))
    for s in states:
        if not s.done:
            s.done = True
            s.episode.notes.append(f"stopped after max_turns={limits.max_turns}")
            s.episode.finish_reason = "length"


def _record_assistant(s: _State, c, setting: str, limits: SettingLimits) -> None:
    ep = s.episode
    s.messages.append({"role": "assistant", "content": c.text})
    ep.turns.append(Turn("assistant", c.text, seconds=c.latency_s, seed=c.seed))
    ep.prompt_tokens += c.prompt_tokens
    ep.completion_tokens += c.completion_tokens
    ep.latency_s += c.latency_s
    ep.final_text, ep.finish_reason = c.text, c.finish_reason
    s.action = _parse_action(c.text, setting)
    if s.action is None:
        s.done = True  # a turn with no tool call or command is the final answer
    elif ep.completion_tokens >= limits.max_episode_tokens:
        s.done, s.action = True, None
        ep.notes.append(f"episode token budget of {limits.max_episode_tokens} exhausted")
        ep.finish_reason = "length"


def _parse_action(text: str, setting: str) -> tuple[str, str] | None:
    if setting == "tool":
        m = TOOL_CALL.search(text)
        if not m:
            return ("error", "malformed tool call: missing </tool_call>") if "<tool_call>" in text else None
        try:
            call = json.loads(m.group(1))
            if call.get("name") != "python":
                return "error", f"unknown tool {call.get('name')!r}; the only tool is python"
            return "python", str(call["arguments"]["code"])
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            return "error", f'malformed tool call ({exc}); use {{"name": "python", "arguments": {{"code": "..."}}}}'
    if m := SUBMIT.search(text):
        return "submit", m.group(1).strip()
    if m := BASH.search(text):
        return "bash", m.group(1).strip()
    return None


def _act(s: _State, setting: str, limits: SettingLimits, backend: str) -> None:
    kind, payload = s.action
    s.action = None
    if kind == "error":
        output = payload
    elif kind == "python":
        output, cpu = run_python(payload, limits, backend)
        s.cpu_used += cpu
    else:
        output = _shell(s, kind, payload, limits, backend)
    if s.done:
        return
    role = "tool"
    s.messages.append({"role": role, "content": output})
    s.episode.turns.append(Turn(role, output, tool_output=output))
    if s.cpu_used > limits.episode_cpu_s:
        s.done = True
        s.episode.notes.append(f"episode CPU budget of {limits.episode_cpu_s:g}s exhausted")


def _open_terminal(backend: str) -> Session | None:
    try:
        return open_session(backend, allow_none=backend == "none")
    except SandboxError:
        return None


def _shell(s: _State, kind: str, payload: str, limits: SettingLimits, backend: str) -> str:
    """Agentic: the episode's own sandbox keeps its files between commands."""
    try:
        if s.session is None:
            raise SandboxError("no terminal could be opened")
        lim = _command_limits(limits)
        if kind == "submit":
            res = s.session.run(lim, cmd=f"cat -- '{payload}'")
            s.done = True
            if res.exit_code == 0:
                s.episode.submitted_code = res.stdout
                s.episode.notes.append(f"submitted {payload}")
            else:
                s.episode.notes.append(f"submit failed: {payload} not readable")
            return ""
        res = s.session.run(lim, cmd=payload)
        s.cpu_used += res.cpu_s
        return _describe(res, limits) or "[no output]"
    except SandboxError as exc:
        return f"[sandbox error: {exc}]"
