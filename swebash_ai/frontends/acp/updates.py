"""What the editor is sent: the loop's events as ``session/update`` notifications, a prompt's content blocks as
the user's text, a saved conversation replayed.

Nothing here decides anything: a tool call's kind, title, locations and diff are read off the event the loop
already produced; its status follows the loop (pending until it runs, then completed or failed). Every call the
editor saw start gets a final status, a turn cancelled midway included.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from acp import schema
from acp.exceptions import RequestError

from swebash_ai.agent import events as ev

if TYPE_CHECKING:
    from swebash_ai.tools.registry import ToolResult

Send = Callable[[Any], Awaitable[None]]

KINDS: dict[str, schema.ToolKind] = {
    "read_file": "read", "list_dir": "read", "exists": "read", "metadata": "read",
    "find_files": "search", "search": "search",
    "write_file": "edit", "edit_file": "edit", "diagnostics": "read",
    "run_command": "execute", "read_process": "execute", "stop_process": "execute",
    "web_search": "fetch", "fetch_url": "fetch",
    "update_plan": "think", "ask_user": "other",
}
"""The editor's icon for each built-in tool; any other tool (an MCP server's) is ``other``."""

MAX_SHOWN = 20_000
"""Characters of a tool's result or live output shown in the editor (the model gets what the loop gives it)."""
OUTPUT_EVERY = 0.2
"""Seconds between live-output updates of one call (the final result always goes out)."""


def tool_kind(name: str) -> schema.ToolKind:
    return KINDS.get(name, "other")


def _diagnostics(result: ToolResult) -> dict[str, Any]:
    """An edit's language-server diagnostics as data (docs/tools.md "Diagnostics"), for the editor's raw output."""
    return {"diagnostics": result.metadata["diagnostics"]} if "diagnostics" in result.metadata else {}


def text_content(text: str) -> schema.ContentToolCallContent:
    return schema.ContentToolCallContent(type="content", content=schema.TextContentBlock(type="text", text=text))


def _cap(text: str) -> str:
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + f"\n… ({len(text) - MAX_SHOWN} more characters)"


def locations(arguments: Any, cwd: Path) -> list[schema.ToolCallLocation]:
    """The file a call names (its ``path`` argument, made absolute)."""
    if not isinstance(arguments, dict) or not isinstance(arguments.get("path"), str) or not arguments["path"]:
        return []
    path = Path(arguments["path"]).expanduser()
    return [schema.ToolCallLocation(path=str(path if path.is_absolute() else cwd / path))]


def diff_content(name: str, arguments: Any, cwd: Path) -> list[schema.FileEditToolCallContent]:
    """A write or an edit as the editor's diff: the text replaced and its replacement (a whole file written:
    no old text), as the arguments say."""
    if name not in ("write_file", "edit_file") or not isinstance(arguments, dict):
        return []
    where = locations(arguments, cwd)
    if not where:
        return []
    if name == "write_file" and isinstance(arguments.get("content"), str):
        return [schema.FileEditToolCallContent(type="diff", path=where[0].path, new_text=arguments["content"])]
    if isinstance(arguments.get("old"), str) and isinstance(arguments.get("new"), str):
        return [schema.FileEditToolCallContent(type="diff", path=where[0].path, old_text=arguments["old"],
                                               new_text=arguments["new"])]
    return []


def plan_update(plan: Any) -> schema.AgentPlanUpdate:
    return schema.AgentPlanUpdate(session_update="plan", entries=[
        schema.PlanEntry(content=item.step, priority="medium", status=item.status) for item in plan.items])


def message_chunk(text: str) -> schema.AgentMessageChunk:
    return schema.AgentMessageChunk(session_update="agent_message_chunk",
                                    content=schema.TextContentBlock(type="text", text=text))


def notice_chunk(text: str, level: str = "info") -> schema.AgentMessageChunk:
    """A notice as a quoted paragraph of the answer (the editor has no other place for it)."""
    mark = "⚠ " if level == "warning" else ""
    return message_chunk(f"\n\n> {mark}{text.replace(chr(10), chr(10) + '> ')}\n\n")


class CallIds:
    """The editor's ids of one session's tool calls: unique in the session, however the provider numbers them.

    Local OpenAI-compatible servers number calls ``call_0``, ``call_1``... in every response: passed through,
    turn 2's call would be drawn over turn 1's. The provider's id stays the conversation's (the provider
    matches results by it); the editor gets the provider's id the first time and ``ID-2``, ``ID-3``... after.
    """

    def __init__(self) -> None:
        self.used: set[str] = set()
        self.live: dict[str, str] = {}
        """The provider's id -> the editor's, for the latest call of each provider id."""

    def start(self, provider_id: str) -> str:
        """A new call: its editor id, never given before in this session."""
        base = provider_id or "call"
        editor_id, n = base, 1
        while editor_id in self.used:
            n += 1
            editor_id = f"{base}-{n}"
        self.used.add(editor_id)
        self.live[provider_id] = editor_id
        return editor_id

    def of(self, provider_id: str) -> str:
        """The editor id of the latest call the provider gave ``provider_id`` (itself when none started)."""
        return self.live.get(provider_id, provider_id)


class TurnUpdates:
    """One turn's events, sent as they come; remembers the calls it announced until each has finished.

    Calls are known by the editor's ids (:class:`CallIds`): the loop's events carry the provider's, mapped here.
    """

    def __init__(self, send: Send, cwd: Path, ids: CallIds | None = None) -> None:
        self.send = send
        self.cwd = cwd
        self.ids = ids or CallIds()
        self.open: dict[str, list[Any]] = {}
        """Calls announced and not finished: id -> their diffs (kept in the final content: an update replaces it)."""
        self._output: dict[str, list[str]] = {}
        self.terminals: dict[str, schema.TerminalToolCallContent] = {}
        """Calls running in an editor terminal: id -> the terminal, kept in the call's content to the end (the
        editor goes on showing a released terminal's output)."""
        self._output_at: dict[str, float] = {}

    async def handle(self, event: ev.AgentEvent) -> None:
        if isinstance(event, ev.TextDelta):
            if event.text:
                await self.send(message_chunk(event.text))
        elif isinstance(event, ev.ReasoningDelta):
            if event.text:
                await self.send(schema.AgentThoughtChunk(session_update="agent_thought_chunk",
                                                         content=schema.TextContentBlock(type="text", text=event.text)))
        elif isinstance(event, ev.ToolCallStarted):
            await self._started(event)
        elif isinstance(event, ev.ToolCallRunning):
            await self.progress(self.ids.of(event.call_id), status="in_progress")
        elif isinstance(event, ev.ToolOutput):
            await self._output_arrived(self.ids.of(event.call_id), event.text)
        elif isinstance(event, ev.ToolCallFinished):
            await self._finished(self.ids.of(event.call_id), event.result, event.decided_by)
        elif isinstance(event, ev.PlanUpdated):
            await self.send(plan_update(event.plan))
        elif isinstance(event, ev.Notice):
            await self.notice(event.text, event.level)
        elif isinstance(event, ev.SubagentEvent):
            await self._child(event)

    async def _child(self, nested: ev.SubagentEvent) -> None:
        """A helper agent's calls, as calls of their own under the ``task`` call: the id ``TASK_ID/CALL_ID``
        names the parent, the title the agent. Its text is its answer to the parent, which the task call's
        result carries: it is not the answer to the person, so it is not sent as one."""
        inner = nested.event
        if isinstance(inner, ev.ToolCallStarted | ev.ToolCallRunning | ev.ToolOutput | ev.ToolCallFinished
                      | ev.SubagentEvent):
            renamed: Any = dataclasses.replace(inner, call_id=f"{nested.call_id}/{inner.call_id}")
            if isinstance(renamed, ev.ToolCallStarted):
                renamed = dataclasses.replace(renamed, summary=f"[{nested.agent}] {renamed.summary or renamed.name}")
            await self.handle(renamed)

    async def notice(self, text: str, level: str = "info") -> None:
        """Something for the person that is not the answer, set apart from it (the editor has no other place)."""
        await self.send(notice_chunk(text, level))

    async def _started(self, event: ev.ToolCallStarted) -> None:
        arguments = event.arguments if isinstance(event.arguments, dict) else {}
        content: list[Any] = list(diff_content(event.name, arguments, self.cwd))
        call_id = self.ids.start(event.call_id)
        self.open[call_id] = content
        await self.send(schema.ToolCallStart(
            session_update="tool_call", tool_call_id=call_id, title=event.summary or event.name,
            kind=tool_kind(event.name), status="pending", locations=locations(arguments, self.cwd),
            content=content or None, raw_input=event.arguments))

    async def progress(self, call_id: str, **fields: Any) -> None:
        """An update of an open call, by its editor id."""
        if call_id in self.open:
            await self.send(schema.ToolCallProgress(session_update="tool_call_update", tool_call_id=call_id,
                                                    **fields))

    async def terminal(self, call_id: str, terminal_id: str) -> None:
        """The call's command runs in the editor's terminal ``terminal_id``: shown in the call, live."""
        if call_id not in self.open:
            return
        shown = self.terminals[call_id] = schema.TerminalToolCallContent(type="terminal", terminal_id=terminal_id)
        await self.progress(call_id, status="in_progress", content=[*self.open[call_id], shown])

    async def _output_arrived(self, call_id: str, piece: str) -> None:
        parts = self._output.setdefault(call_id, [])
        parts.append(piece)
        now = time.monotonic()
        if now - self._output_at.get(call_id, 0.0) < OUTPUT_EVERY:
            return
        self._output_at[call_id] = now
        text = "".join(parts)
        await self.progress(call_id, status="in_progress", content=[text_content(_cap(text[-MAX_SHOWN:]))])

    async def _finished(self, call_id: str, result: ToolResult, decided_by: str) -> None:
        if call_id not in self.open:
            return
        diffs = self.open.pop(call_id)
        self._output.pop(call_id, None)
        terminal = self.terminals.pop(call_id, None)
        body = result.text if result.ok else result.for_model()
        content: list[Any] = [*(diffs if result.ok else []), *([terminal] if terminal is not None else []),
                              *([text_content(_cap(body))] if body else [])]
        await self.send(schema.ToolCallProgress(
            session_update="tool_call_update", tool_call_id=call_id, status="completed" if result.ok else "failed",
            content=content or None,
            raw_output={"status": result.status, "exit_code": result.exit_code, "decided_by": decided_by,
                        **_diagnostics(result)}))

    async def close_open(self, why: str) -> None:
        """Calls still open when the turn ended (cancelled, failed): each gets its final status now."""
        for call_id in list(self.open):
            del self.open[call_id]
            terminal = self.terminals.pop(call_id, None)
            await self.send(schema.ToolCallProgress(session_update="tool_call_update", tool_call_id=call_id,
                                                    status="failed",
                                                    content=[*([terminal] if terminal else []), text_content(why)]))


# --- the prompt ---------------------------------------------------------------------------------------------
def prompt_text(blocks: list[Any], check_read: Callable[[str], str | None],
                images: list[tuple[bytes, str]] | None = None) -> tuple[str, list[str]]:
    """The user's text from a prompt's content blocks, and notices for what was left out.

    A link to a local file becomes an ``@"path"`` mention, attached through the path guard like a typed one. An
    embedded text resource is the editor's own copy of a file: included, unless it names a file the guard would
    refuse to read (``check_read`` says why). An image block's bytes and claimed type go to ``images`` (the
    caller makes them attachments, checking the bytes); without ``images``, and for audio, the block is refused.
    """
    parts: list[str] = []
    notices: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind == "image" and images is not None:
            try:
                images.append((base64.b64decode(block.data, validate=True), str(block.mime_type)))
            except (ValueError, TypeError) as exc:
                raise RequestError.invalid_params({"details": f"an image block's data is not base64: {exc}"}) from exc
        elif kind == "resource_link":
            path = _file_path(block.uri)
            parts.append(f'@"{path}"' if path is not None else f"[{block.name}]({block.uri})")
        elif kind == "resource":
            resource = block.resource
            uri = getattr(resource, "uri", "")
            text = getattr(resource, "text", None)
            path = _file_path(uri)
            refused = check_read(path) if path is not None else None
            if refused is not None:
                notices.append(f"Not attached: {uri} ({refused}).")
            elif text is None:
                notices.append(f"Not attached: {uri} (binary content is not read).")
            else:
                fence = "```"
                while fence in text:
                    fence += "`"
                parts.append(f"[Attached by the editor: {uri}]\n{fence}\n{text.rstrip()}\n{fence}")
        else:
            raise RequestError.invalid_params({"details": f"{kind or 'this'} content is not supported: swebash-ai "
                                               "accepts text, images, resource links and embedded text resources"})
    return "\n\n".join(p for p in parts if p), notices


def _file_path(uri: str) -> str | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return unquote(parsed.path)


# --- a saved conversation, replayed -------------------------------------------------------------------------
async def replay(messages: list[dict[str, Any]], send: Send, cwd: Path, ids: CallIds) -> None:
    """A loaded session's history as the updates it would have produced: the user's messages, the answers, each
    tool call with its result (under an editor id of ``ids``: a saved conversation repeats ids too)."""
    from swebash_ai.agent.conversation import is_note_only
    from swebash_ai.agent.mentions import split_attachments

    for at, message in enumerate(messages):
        role, content = message.get("role"), message.get("content")
        if role == "user" and isinstance(content, str) and content and not is_note_only(message):
            typed = split_attachments(content)[0]
            await send(schema.UserMessageChunk(session_update="user_message_chunk",
                                               content=schema.TextContentBlock(type="text", text=typed)))
        elif role == "assistant":
            if isinstance(content, str) and content:
                await send(message_chunk(content))
            results: dict[Any, dict[str, Any]] = {}
            for later in messages[at + 1:]:  # this response's results: the tool messages up to the next response
                if later.get("role") == "assistant":
                    break
                if later.get("role") == "tool":
                    results.setdefault(later.get("tool_call_id"), later)
            for call in message.get("tool_calls") or []:
                await _replay_call(call, results.get(call.get("id")), send, cwd, ids)


async def _replay_call(call: dict[str, Any], result: dict[str, Any] | None, send: Send, cwd: Path,
                       ids: CallIds) -> None:
    function = call.get("function") or {}
    name = str(function.get("name", "tool"))
    try:
        arguments = json.loads(function.get("arguments") or "{}")
    except ValueError:
        arguments = {}
    shown = ""
    if isinstance(arguments, dict):
        shown = next((str(arguments[k]) for k in ("command", "path", "query", "url", "question") if k in arguments),
                     "")
    body = str((result or {}).get("content") or "")
    failed = result is None or body.startswith(("Error:", "Denied:", "Cancelled:", "Timed out:"))
    content: list[Any] = [*diff_content(name, arguments, cwd), *([text_content(_cap(body))] if body else [])]
    await send(schema.ToolCallStart(
        session_update="tool_call", tool_call_id=ids.start(str(call.get("id", ""))),
        title=f"{name}: {shown}" if shown else name,
        kind=tool_kind(name), status="failed" if failed else "completed", locations=locations(arguments, cwd),
        content=content or None, raw_input=arguments))
