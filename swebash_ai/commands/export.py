"""Trajectory export: saved sessions as OpenAI chat fine-tuning records (JSONL) or readable Markdown.

Contract:
    :func:`openai_record` turns one :class:`~swebash_ai.agent.conversation.Conversation` into
    ``{"messages": [...], "tools": [...]}``: the system prompt the session used (saved in its meta), then
    ``user`` messages, ``assistant`` messages (``content`` and/or ``tool_calls`` with ``id``, ``type``
    ``"function"``, ``function.name`` and JSON-string ``function.arguments``), and ``tool`` messages with
    their ``tool_call_id``; ``tools`` is the schemas the model was offered. A user message with images has
    content parts, its images as ``image_url`` data URLs read back from the session's attachments (OpenAI's
    vision fine-tuning takes them); the Markdown names where each image is kept, never inlines it. Keys the
    fine-tuning format does not know (a tool message's ``name``) are dropped. :func:`markdown_transcript` is
    the same session for people, who are told who said what: the app's notes to the model (``app_notes``) are
    labelled as swebash-ai's, never shown as the user's words, and a ``!command`` as the command the user ran and its
    output (the record keeps the wire text the model read). Both redact secrets as the audit log does
    (:func:`swebash_ai.safety.redact.redact`): key-looking strings everywhere, and values of secret-named
    arguments.

Why:
    People build datasets and evals from their own sessions; a record must load in the usual tools without
    hand-editing, and must not leak a key that went through a tool call. Sessions saved before the offered
    tools were recorded get the current built-in schemas of the tools they called.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterable
from typing import Any, TextIO

from swebash_ai.agent.conversation import (
    BROKE_OFF,
    NOTES,
    STOPPED,
    UNSAID,
    Conversation,
    as_sent,
    user_run,
    why_incomplete,
)
from swebash_ai.agent.image_store import ATTACHMENTS, IMAGES
from swebash_ai.errors import ExitCode, UsageError
from swebash_ai.providers.base import Message
from swebash_ai.safety.redact import redact, redact_text
from swebash_ai.safety.terminal_text import safe

FORMATS = ("openai", "markdown")

_CUT_MARK = {
    STOPPED: "*(The user stopped this answer here: it is incomplete.)*",
    BROKE_OFF: "*(The model's stream broke off here: this answer is incomplete.)*",
    UNSAID: "*(This answer broke off here: it is incomplete.)*",  # saved before the reason was kept
}
"""The line under an answer that did not reach its end, by why (``why_incomplete``)."""


def _arguments(raw: Any) -> str:
    """Arguments as a JSON string, with secret-named values masked (as in the audit log)."""
    try:
        parsed = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        return redact_text(str(raw))
    return json.dumps(redact(parsed), ensure_ascii=False)


def _text(content: Any) -> str:
    if content is None:
        return ""
    return redact_text(content if isinstance(content, str) else json.dumps(content, ensure_ascii=False))


def _part(part: Any) -> Any:
    """One content part of a message with images: its text redacted, an image as it was sent."""
    if isinstance(part, dict) and part.get("type") == "text":
        return {"type": "text", "text": _text(part.get("text"))}
    return part


def _message(msg: Message) -> dict[str, Any] | None:
    role = msg.get("role")
    if role in ("user", "system"):
        content = msg.get("content")
        if isinstance(content, list):  # text and images (OpenAI's vision fine-tuning takes image_url parts)
            return {"role": role, "content": [_part(p) for p in content]}
        return {"role": role, "content": _text(content)}
    if role == "assistant":
        out: dict[str, Any] = {"role": "assistant"}
        content = _text(msg.get("content"))
        calls = msg.get("tool_calls") or []
        if content or not calls:
            out["content"] = content
        if calls:
            out["tool_calls"] = [
                {
                    "id": str(c.get("id", "")),
                    "type": "function",
                    "function": {
                        "name": str(c.get("function", {}).get("name", "")),
                        "arguments": _arguments(c.get("function", {}).get("arguments", "{}")),
                    },
                }
                for c in calls
            ]
        return out
    if role == "tool":
        return {"role": "tool", "tool_call_id": str(msg.get("tool_call_id", "")), "content": _text(msg.get("content"))}
    return None  # an unknown role is not part of the format


def _called(conv: Conversation) -> set[str]:
    return {c["function"]["name"] for m in conv.messages for c in m.get("tool_calls") or ()}


def offered_tools(conv: Conversation) -> list[dict[str, Any]]:
    """The tool schemas saved with the session; for older sessions, today's schemas of the tools it called."""
    saved = conv.meta.get("tools")
    if isinstance(saved, list):
        return [t for t in saved if isinstance(t, dict)]
    called = _called(conv)
    if not called:
        return []
    from swebash_ai.tools import builtin_tools

    return [t.definition() for t in builtin_tools() if t.name in called]


def openai_record(conv: Conversation) -> dict[str, Any]:
    """One session in the OpenAI chat fine-tuning shape (see the module docstring)."""
    conv.repair()  # a session cut short still pairs every call with a result
    messages: list[dict[str, Any]] = []
    system = conv.meta.get("system")
    if isinstance(system, str) and system:
        messages.append({"role": "system", "content": redact_text(system)})
    messages += [m for m in (_message(_sent(conv, msg)) for msg in conv.messages) if m is not None]  # what it read
    return {"messages": messages, "tools": offered_tools(conv)}


def _sent(conv: Conversation, msg: Message) -> Message:
    """The message as sent: its images read back from the session's attachments (see agent/image_store.py)."""
    wire = as_sent(conv.full(msg))  # a result set aside, read back
    return conv.images.wire(wire, msg[IMAGES]) if msg.get(IMAGES) else wire


def _image_lines(own: Message) -> list[str]:
    """Where a user message's images are kept, one line each (the transcript never inlines an image)."""
    lines = []
    for ref in own.get(IMAGES) or ():
        if isinstance(ref, dict):
            suffix = str(ref.get("mime", "image/")).split("/")[-1].replace("jpeg", "jpg")
            lines.append(f"*Image* {ref.get('name')}: {ref.get('width')}×{ref.get('height')}, kept as "
                         f"`{ATTACHMENTS}/{ref.get('sha256')}.{suffix}` beside the session file.")
    return lines




def children(conv: Conversation) -> dict[str, Conversation]:
    """The helper agents' own conversations (``task`` calls), by the parent's call id, as conversations of their
    own: their system prompt and offered tools in their meta, as a session's are."""
    out: dict[str, Conversation] = {}
    for call_id, record in conv.subagents().items():
        if isinstance(record, dict) and isinstance(record.get("messages"), list):
            meta = {"system": record.get("system"), "tools": record.get("tools") or [], "model": record.get("model"),
                    "agent": record.get("agent")}
            out[str(call_id)] = Conversation([m for m in record["messages"] if isinstance(m, dict)],
                                             id=f"{conv.id}/{call_id}", created=conv.created, meta=meta)
    return out


def openai_jsonl(conversations: Iterable[Conversation]) -> Iterable[str]:
    """One record per session, then one per helper agent it ran (its own trajectory)."""
    for conv in conversations:
        yield json.dumps(openai_record(conv), ensure_ascii=False)
        for child in children(conv).values():
            yield json.dumps(openai_record(child), ensure_ascii=False)


def _fenced(text: str, lang: str = "") -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}{lang}\n{text.rstrip()}\n{fence}"


def markdown_transcript(conv: Conversation) -> str:
    """A readable transcript: who said what, each tool call with its arguments and result. Terminal control
    characters show as escapes (``\\x1b]0;...``): it is read on a terminal, and the model wrote most of it."""
    record = openai_record(conv)
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(conv.created))
    model = conv.meta.get("model") or "unknown model"
    lines = [f"# {redact_text(conv.title)}", "", f"Session `{conv.id}`, {when}, {model}."]
    names: dict[str, str] = {}
    helpers = children(conv)
    # The saved messages beside the record's: which broke off (a cancel, a cut stream), which carry the app's
    # notes or a command the user ran; the record keeps what the model read, not who wrote it.
    saved: list[Message] = [conv.full(m) for m in conv.messages if _message(m) is not None]
    saved = [{}] * (len(record["messages"]) - len(saved)) + saved  # the system prompt comes first
    for msg, own in zip(record["messages"], saved, strict=True):
        role = msg["role"]
        notes = [_text(n) for n in own.get(NOTES) or () if isinstance(n, str)]
        ran = user_run(own)
        if notes:  # shown apart, below: the content as the user typed it or the tool returned it
            msg = {**msg, "content": _text(own.get("content"))}
        cut = why_incomplete(own)
        if role == "system":
            lines += ["", "<details><summary>System prompt</summary>", "", _fenced(msg["content"], "text"),
                      "", "</details>"]
        elif ran is not None:
            lines += ["", "## User", "", "Ran a command:", "", _fenced(_text(ran.shown), "text"), "",
                      f"**Result** of `{ran.name}`", "", _fenced(_text(ran.output) or "(no output)", "text")]
        elif role == "user" and notes and not msg["content"]:  # a message the app made to carry its notes
            lines += ["", "## Note from swebash-ai", "", *notes]
            notes = []
        elif role == "user" and isinstance(msg["content"], list):  # text, then images
            typed = "\n\n".join(p["text"] for p in msg["content"] if p.get("type") == "text")
            lines += ["", "## User", "", typed, "", *_image_lines(own)]
        elif role == "user":
            lines += ["", "## User", "", msg["content"]]
        elif role == "assistant":
            lines += ["", "## Assistant"]
            if msg.get("content"):
                lines += ["", msg["content"]]
            for call in msg.get("tool_calls", []):
                names[call["id"]] = call["function"]["name"]
                lines += ["", f"**Tool call** `{call['function']['name']}`", "",
                          _fenced(call["function"]["arguments"], "json")]
            if cut is not None:
                lines += ["", _CUT_MARK[cut]]
        elif role == "tool":
            name = names.get(msg["tool_call_id"], "tool")
            lines += ["", f"**Result** of `{name}`", "", _fenced(msg["content"] or "(no output)", "text")]
            child = helpers.get(msg["tool_call_id"])
            if child is not None:  # the helper's own conversation, folded under its result
                body = markdown_transcript(child).split("\n", 3)[3]  # without its title and header line
                lines += ["", f"<details><summary>The {child.meta.get('agent')} agent's own conversation</summary>",
                          body, "</details>"]
        if notes:
            lines += ["", "*Note from swebash-ai to the model:*", "", *notes]
    return safe("\n".join(lines) + "\n", visible=True)


def export_sessions(session_id: str | None, *, every: bool, fmt: str, out: TextIO | None = None) -> int:
    """``swebash-ai export``: the saved session ``session_id`` (the latest when None) or ``every`` one, on ``out``."""
    from swebash_ai.agent.session_files import find_session, list_sessions
    from swebash_ai.storage.locations import locations

    out = out or sys.stdout
    folder = locations().sessions_dir
    if every and session_id:
        raise UsageError("export: give a session ID or --all, not both.")
    if every:
        paths = [s.path for s in reversed(list_sessions(folder, limit=1_000_000, titles=False))]
        if not paths:
            raise UsageError(f"export: no saved session in {folder}.")
    else:
        path = find_session(folder, session_id)
        if path is None:
            what = f"no single session matches '{session_id}'" if session_id else "no saved session"
            raise UsageError(f"export: {what} in {folder}.")
        paths = [path]
    conversations = (Conversation.load(p) for p in paths)
    if fmt == "markdown":  # a transcript a terminal shows (markdown_transcript makes control characters visible)
        out.write("\n---\n\n".join(markdown_transcript(c) for c in conversations))
    else:
        for line in openai_jsonl(conversations):
            out.write(line + "\n")
    return ExitCode.OK
