"""Tool calls for models that print them as text: a :class:`Provider` wrapper, so the loop needs no change.

Two jobs, one wrapper (:class:`TextToolCallProvider`):

* **Recovery** (always on in one-shot): some models answer a request that offers native tools with the call
  printed as JSON text (```` ```json {"name": "read_file", "arguments": {...}} ``` ````). When a text-only
  answer is *exactly one* JSON tool call for a tool that was offered, it becomes a real :class:`ToolCall`,
  so it goes through the same validation, policy and approval path as a native call.
* **Text mode** (``text_mode=True``): for models whose server refuses ``tools=`` altogether. The tools are
  described in a system message, ``tools`` is not sent, earlier calls and results in the history are
  rewritten as plain text, and JSON tool calls are parsed out of the reply.

Text that may be the start of a call is held back while it streams (at the start of the answer in recovery
mode, at the start of any line in text mode); everything else streams through at once, so a normal answer is
not delayed. Held text that turns out not to be a call is released unchanged.

When a call is complete: native calls pass through as the inner provider yields them (as soon as each is
complete). In text mode, the first call is yielded as soon as its JSON (or its closing fence) has arrived, so
the loop can start it while the model goes on writing: only the first call is used and what follows it is
dropped, so nothing later can change it. A recovered call waits for the end of the answer, by definition
(the whole answer must be the call).
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import AsyncIterator, Collection, Sequence
from typing import Any

from swebash_ai.errors import BadRequestError, ImageInputError, ProviderError
from swebash_ai.providers.base import Chunk, FinishChunk, Message, Provider, TextChunk, ToolCall

__all__ = ["TextToolCallProvider", "describe_tools", "is_tools_unsupported", "parse_tool_calls"]

log = logging.getLogger(__name__)

#: A 400 answer that names tools or function calling together with one of these words means "this model or
#: server cannot take native tool definitions" (Ollama: "... does not support tools"; vLLM: "auto tool choice
#: requires --enable-auto-tool-choice"; llama.cpp: "tools param requires --jinja flag").
_TOOLS_WORD = re.compile(r"\b(tools?|function[ _-]?call(ing|s)?|tool[ _-]?choice|functions)\b", re.IGNORECASE)
_REFUSAL_WORD = re.compile(
    r"support|requires?|enable|not allowed|not available|unknown|unrecognized|unexpected|extra", re.IGNORECASE
)

_FENCE = re.compile(r"```[ \t]*(?:json|JSON|tool_call|tool)?[ \t]*\n(.*?)\n?[ \t]*```", re.DOTALL)
_MAX_HOLD = 20_000
"""Held-back text longer than this is released: no tool call is that long."""


def is_tools_unsupported(error: BaseException) -> bool:
    """True when a provider error says the model or server cannot take native tool definitions."""
    if not isinstance(error, BadRequestError) or isinstance(error, ImageInputError):
        return False
    text = str(error)
    return bool(_TOOLS_WORD.search(text) and _REFUSAL_WORD.search(text))


def _call_from_object(obj: Any, known: Collection[str] | None) -> ToolCall | None:
    """A tool call from one decoded JSON value, or ``None`` when it is not one."""
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("function"), dict):  # OpenAI's {"type": "function", "function": {...}}
        obj = obj["function"]
    name = obj.get("tool", obj.get("name"))
    if not isinstance(name, str) or not name:
        return None
    if known is not None and name not in known:
        return None
    extra = set(obj) - {"tool", "name", "arguments", "parameters", "args", "input", "type", "id"}
    if extra:
        return None
    args: Any = next((obj[k] for k in ("arguments", "parameters", "args", "input") if k in obj), {})
    if isinstance(args, str):
        raw = args  # already a JSON string (maybe invalid: the tool's validation reports it)
    elif isinstance(args, dict):
        raw = json.dumps(args, ensure_ascii=False)
    else:
        return None
    call_id = obj.get("id") if isinstance(obj.get("id"), str) and obj.get("id") else None
    return ToolCall(call_id or f"call_text_{uuid.uuid4().hex[:16]}", name, raw)


def _calls_from_json(text: str, known: Collection[str] | None) -> list[ToolCall] | None:
    """Tool calls in one JSON document (an object or a list of objects), or ``None``."""
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, ValueError):
        return None
    items = value if isinstance(value, list) else [value]
    calls = [_call_from_object(item, known) for item in items]
    if not calls or any(c is None for c in calls):
        return None
    return [c for c in calls if c is not None]


def parse_tool_calls(
    text: str, known: Collection[str] | None = None, *, whole: bool = False
) -> tuple[str, list[ToolCall]]:
    """Find JSON tool calls in a model's text.

    Accepted shapes: ``{"tool": name, "arguments": {...}}``, ``{"name": name, "arguments": {...}}`` (also
    ``parameters``/``args``/``input``, arguments as an object or a JSON string), OpenAI's
    ``{"function": {...}}``, or a list of those; bare or in a fenced block (```` ```json ````).

    Args:
        text: The model's reply.
        known: Tool names that exist; a call naming another tool is not a call. ``None``: any name.
        whole: The text must be exactly the call(s) (recovery of printed native calls); otherwise prose before
            the first call is kept and returned.

    Returns:
        (prose, calls): ``calls`` is empty when no tool call was found, and then ``prose`` is ``text``.
    """
    stripped = text.strip()
    if not stripped:
        return text, []
    if whole:
        body = stripped
        match = _FENCE.fullmatch(stripped)
        if match:
            body = match.group(1).strip()
        calls = _calls_from_json(body, known)
        return ("", calls) if calls else (text, [])
    calls_found: list[ToolCall] = []
    first_start: int | None = None
    for match in _FENCE.finditer(text):
        calls = _calls_from_json(match.group(1).strip(), known)
        if calls:
            calls_found.extend(calls)
            first_start = match.start() if first_start is None else first_start
    if not calls_found:
        # A bare JSON object (or list) on its own, starting a line.
        for start in (m.start(1) for m in re.finditer(r"(?:^|\n)[ \t]*([{\[])", text)):
            decoder = json.JSONDecoder()
            try:
                value, _end = decoder.raw_decode(text, start)
            except json.JSONDecodeError:
                continue
            calls = _calls_from_json(json.dumps(value), known)
            if calls:
                calls_found.extend(calls)
                first_start = start if first_start is None else first_start
                break
    if not calls_found:
        return text, []
    assert first_start is not None
    return text[:first_start].rstrip(), calls_found


def describe_tools(tools: Sequence[dict[str, Any]], tool_choice: str = "auto") -> str:
    """The system message that teaches a model without native tool calling how to call the tools."""
    lines = [
        "You can use tools. To call one, reply with a single fenced JSON block and nothing after it:",
        "```json",
        '{"tool": "TOOL_NAME", "arguments": {"ARGUMENT": "VALUE"}}',
        "```",
        "The result comes back in the next message. Call one tool at a time. When you have what you need, "
        "answer normally, without a JSON block.",
        "",
        "Tools:",
    ]
    for spec in tools:
        fn = spec.get("function", spec)
        params = fn.get("parameters", {})
        lines.append(f"- {fn.get('name')}: {' '.join(str(fn.get('description', '')).split())}")
        schema = json.dumps(params, ensure_ascii=False, separators=(",", ":"))
        lines.append(f"  arguments (JSON Schema): {schema}")
    if tool_choice == "none":
        lines.append("\nDo not call any tool now: answer with what you have.")
    return "\n".join(lines)


def _as_text_history(messages: Sequence[Message]) -> list[Message]:
    """Rewrite native tool calls and results as plain text, for servers that reject them."""
    out: list[Message] = []
    for msg in messages:
        role = msg.get("role")
        if role == "assistant" and msg.get("tool_calls"):
            parts = [str(msg.get("content") or "").strip()]
            for call in msg["tool_calls"]:
                fn = call.get("function", {})
                try:
                    args: Any = json.loads(fn.get("arguments") or "{}")
                except json.JSONDecodeError:
                    args = fn.get("arguments")
                block = json.dumps({"tool": fn.get("name"), "arguments": args}, ensure_ascii=False)
                parts.append(f"```json\n{block}\n```")
            out.append({"role": "assistant", "content": "\n".join(p for p in parts if p)})
        elif role == "tool":
            out.append(
                {
                    "role": "user",
                    "content": f"[Result of the {msg.get('name', 'tool')} call]\n{msg.get('content', '')}",
                }
            )
        else:
            out.append(dict(msg))
    return out


def _could_start_call(held: str) -> bool:
    """Could ``held`` (from a hold point) still turn into a JSON tool call?"""
    s = held.lstrip()
    if not s:
        return True
    if s[0] in "{[":
        return True
    if s.startswith("```"):
        tag = s[3:].split("\n", 1)
        if len(tag) == 1:  # the info string is still arriving
            return tag[0].strip().lower() in {
                "",
                "j",
                "js",
                "jso",
                "json",
                "t",
                "to",
                "too",
                "tool",
                "tool_",
                "tool_c",
                "tool_ca",
                "tool_cal",
                "tool_call",
            }
        return tag[0].strip().lower() in {"", "json", "tool", "tool_call"} and (
            not tag[1].lstrip() or tag[1].lstrip()[0] in "{["
        )
    return "```".startswith(s)


class TextToolCallProvider:
    """Wraps a provider to recover printed tool calls, and (``text_mode``) to do tool calls in text.

    Attributes:
        inner: The wrapped provider.
        text_mode: Describe tools in the prompt instead of sending ``tools=`` (set when the server refuses
            native tools); may be switched on between requests.
        recover: Turn a text-only answer that is exactly one JSON call of an offered tool into a call.
    """

    def __init__(self, inner: Provider, *, text_mode: bool = False, recover: bool = True) -> None:
        self.inner = inner
        self.model = inner.model
        self.text_mode = text_mode
        self.recover = recover
        self.recovered = 0
        """How many calls were parsed out of text (for a notice)."""

    @property
    def reads_stored_results(self) -> bool:
        """Whether the results a conversation set aside may come as they are kept (:mod:`swebash_ai.providers.wire`):
        as the inner provider takes them. Text mode reads each back as it rewrites the history."""
        return bool(getattr(self.inner, "reads_stored_results", False))

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] | None = None,
        tool_choice: str = "auto",
    ) -> AsyncIterator[Chunk]:
        """Stream like the inner provider, with calls recovered or parsed from text (see the module doc)."""
        if not tools or not (self.text_mode or self.recover):
            async for chunk in self.inner.stream(messages, tools, tool_choice):
                yield chunk
            return
        known = {str(t.get("function", t).get("name")) for t in tools}
        if self.text_mode:
            system = {"role": "system", "content": describe_tools(tools, tool_choice)}
            history = _as_text_history(messages)
            if history and history[0].get("role") == "system":
                first = history[0].get("content") or ""
                history[0] = {"role": "system", "content": f"{first}\n\n{system['content']}"}
            else:
                history.insert(0, system)
            source = self.inner.stream(history, None, "auto")
        else:
            source = self.inner.stream(messages, tools, tool_choice)

        emitted: list[str] = []  # text already passed on
        held: list[str] = []  # text held back because it may be a call
        native_calls = False
        finish: FinishChunk | None = None
        early: ToolCall | None = None  # text mode: the call, yielded before the answer ended
        # Recovery only: the answer began with prose, so it cannot be a call (nothing more is held or kept).
        prose_started = False
        try:
            async for chunk in source:
                if isinstance(chunk, TextChunk):
                    if early is not None:
                        continue  # after the call: dropped, as at the end (only the first call counts)
                    if prose_started:
                        if chunk.text:
                            yield chunk
                        continue
                    if held:
                        held.append(chunk.text)
                    else:
                        released, kept = self._split(emitted, chunk.text)
                        if released:
                            emitted.append(released)
                            prose_started = not self.text_mode and bool(released.strip())
                            yield TextChunk(released)
                        if kept:
                            held.append(kept)
                    pending = "".join(held)
                    if held and self.text_mode and tool_choice != "none" and ("}" in chunk.text or "`" in chunk.text):
                        early = self._complete_call(pending, known)
                        if early is not None:
                            prose = parse_tool_calls(pending, known)[0]
                            if prose.strip():
                                yield TextChunk(prose)
                            self.recovered += 1
                            log.info("tool call parsed out of the text of %s while it streams: %s", self.model,
                                     early.name)
                            yield early
                            held.clear()
                            continue
                    if held and (len(pending) > _MAX_HOLD or not self._still_possible(emitted, pending)):
                        text = pending
                        held.clear()
                        emitted.append(text)
                        prose_started = not self.text_mode and bool(text.strip())
                        yield TextChunk(text)
                elif isinstance(chunk, ToolCall):
                    native_calls = True
                    yield chunk
                elif isinstance(chunk, FinishChunk):
                    finish = chunk
                else:
                    yield chunk
        except ProviderError:  # a cut answer is kept as it arrived; no call is parsed out of cut text
            if held:
                yield TextChunk("".join(held))
            raise
        if early is not None:  # a call complete before the cut was whole: it stands (see the module doc)
            yield FinishChunk("tool_calls")
            return
        text = "".join(held)
        if text and not native_calls:
            if self.text_mode:
                prose, calls = parse_tool_calls(text, known)
                if calls:
                    calls = calls[:1] if tool_choice != "none" else []
            else:
                prose, calls = parse_tool_calls("".join(emitted) + text, known, whole=True)
                calls = calls if len(calls) == 1 and tool_choice != "none" else []
                prose = text if not calls else ""
            if calls:
                self.recovered += len(calls)
                log.info("tool call(s) parsed out of the text of %s: %s", self.model, [c.name for c in calls])
                if prose.strip():
                    yield TextChunk(prose)
                for call in calls:
                    yield call
                yield FinishChunk("tool_calls")
                return
        if text:
            yield TextChunk(text)
        if finish is not None:
            yield finish

    @staticmethod
    def _complete_call(held: str, known: Collection[str]) -> ToolCall | None:
        """The first call in held text, once it is complete: a whole JSON call, outside any open fence."""
        prose, calls = parse_tool_calls(held, known)
        if not calls or prose.count("```") % 2:  # a bare object inside a fence not closed yet: wait for it
            return None
        return calls[0]

    def _split(self, emitted: list[str], piece: str) -> tuple[str, str]:
        """Split a new text piece into (what can be released now, what must be held from a hold point)."""
        if not self.text_mode:
            # Recovery: only an answer that starts like a call is held.
            # (Not ``"".join(emitted)``: that would make a long answer quadratic, one join per chunk.)
            started = any(part.strip() for part in emitted)
            return ("", piece) if not started and _could_start_call(piece) else (piece, "")
        at_line_start = not emitted or emitted[-1].endswith("\n")  # emitted pieces are never empty
        offset = 0
        for line in piece.splitlines(keepends=True):
            if at_line_start and _could_start_call(line):
                return piece[:offset], piece[offset:]
            offset += len(line)
            at_line_start = line.endswith("\n")
        return piece, ""

    def _still_possible(self, emitted: list[str], held: str) -> bool:
        """Is held-back text still possibly a call? (Only then is it kept back.)"""
        s = held.lstrip()
        if not self.text_mode or not s.startswith("```"):
            return _could_start_call(held)
        info, newline, _ = s[3:].partition("\n")
        tag = info.strip().lower()
        if not newline:
            return any(name.startswith(tag) for name in ("json", "tool_call"))
        return tag in {"", "json", "tool", "tool_call"}

