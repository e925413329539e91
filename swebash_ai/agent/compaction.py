"""Compaction by summary: older turns of a long conversation replaced by a summary the model writes.

Contract:
    :func:`plan_cut` picks where the verbatim part starts: at a turn boundary (a user message), keeping the
    most recent whole turns that fit ``keep_tokens`` and always the last turn, so a tool call and its
    result are never separated (both are summarized, or both are kept). :func:`summarize` asks the model,
    without tools, for a summary of the messages before the cut (rendered as a plain transcript, so the
    request needs no tool-call bookkeeping). :func:`apply_summary` replaces those messages with one user
    message starting with :data:`SUMMARY_PREFIX` and records the compaction in ``conversation.meta``.
    The system prompt (with the project instructions) is not part of the conversation and always stays.

Why:
    Trimming (:meth:`Conversation.for_request`) silently forgets the start of a long session: the goal, the
    decisions, the files already read. A summary keeps them at a fraction of the tokens. When the summary
    request fails, the caller leaves the conversation as it is and the trimming applies as before.
"""

from __future__ import annotations

import json
import time
from typing import Any

from swebash_ai.agent.conversation import Conversation, estimate_tokens
from swebash_ai.providers.base import Message, Provider, TextChunk

SUMMARY_PREFIX = "[Summary of the earlier conversation, written when it grew too long for the context]"

SUMMARY_SYSTEM = (
    "You compress a conversation between a user and a terminal assistant so the assistant can go on with it. "
    "Write a concise summary in Markdown: the user's goals and constraints, what was decided, the files read or "
    "changed (with paths), the commands run and what they showed, errors met, and what is still to do. Keep "
    "exact names, paths, numbers and commands; leave out pleasantries. Do not invent anything."
)

COMPACT_AT = 0.8
"""Compact before a turn when the whole conversation would use this share of ``context_tokens``."""

KEEP_RECENT = 0.3
"""Share of ``context_tokens`` the most recent turns may keep verbatim after a compaction."""

TOOL_RESULT_CHARS = 2_000
"""Each tool result is cut to this in the transcript sent for summary (the model saw it whole before)."""


def request_tokens(conv: Conversation, system: str | None, tools: list[dict[str, Any]] | None) -> int:
    """Estimated tokens of a request that sends the whole conversation."""
    extra = len(system or "") // 4 + (len(json.dumps(tools)) // 4 if tools else 0)
    return extra + sum(estimate_tokens(m) for m in conv.messages)


def plan_cut(conv: Conversation, keep_tokens: int) -> int:
    """Index of the first message kept verbatim; 0 when there is nothing older worth summarizing."""
    turns = conv.turns()
    if len(turns) < 2:
        return 0
    kept = len(turns[-1])
    budget = keep_tokens - sum(estimate_tokens(m) for m in turns[-1])
    for turn in reversed(turns[:-1]):
        cost = sum(estimate_tokens(m) for m in turn)
        if cost > budget:
            break
        kept, budget = kept + len(turn), budget - cost
    cut = len(conv.messages) - kept
    older = conv.messages[:cut]
    if not older or (len(older) == 1 and is_summary(older[0])):
        return 0  # only a previous summary: summarizing it again gains nothing
    return cut


def is_summary(message: Message) -> bool:
    content = message.get("content")
    return message.get("role") == "user" and isinstance(content, str) and content.startswith(SUMMARY_PREFIX)


def transcript(messages: list[Message], max_chars: int) -> str:
    """The messages as plain text for the summary request (the middle is cut when it exceeds ``max_chars``)."""
    lines: list[str] = []
    for msg in messages:
        role, content = msg.get("role"), msg.get("content") or ""
        if role == "tool":
            text = str(content)
            if len(text) > TOOL_RESULT_CHARS:
                text = text[: TOOL_RESULT_CHARS // 2] + "\n[…]\n" + text[-TOOL_RESULT_CHARS // 2 :]
            lines.append(f"TOOL RESULT ({msg.get('name', 'tool')}):\n{text}")
            continue
        if content:
            lines.append(f"{str(role).upper()}:\n{content}")
        for call in msg.get("tool_calls") or ():
            lines.append(f"ASSISTANT CALLS {call['function']['name']} {call['function']['arguments']}")
    text = "\n\n".join(lines)
    if len(text) > max_chars:
        half = max_chars // 2
        text = text[:half] + "\n\n[… part of the conversation left out …]\n\n" + text[-half:]
    return text


async def summarize(provider: Provider, messages: list[Message], max_chars: int) -> str:
    """The model's summary of ``messages`` (raises the provider's error, or ValueError for an empty reply)."""
    prompt: list[Message] = [
        {"role": "system", "content": SUMMARY_SYSTEM},
        {"role": "user", "content": "Summarize this conversation so far:\n\n" + transcript(messages, max_chars)},
    ]
    parts: list[str] = []
    async for chunk in provider.stream(prompt, None):
        if isinstance(chunk, TextChunk):
            parts.append(chunk.text)
    summary = "".join(parts).strip()
    if not summary:
        raise ValueError("the model returned an empty summary")
    return summary


def apply_summary(conv: Conversation, cut: int, summary: str) -> None:
    """Replace ``messages[:cut]`` with the summary message; note it in the session's meta."""
    before = sum(estimate_tokens(m) for m in conv.messages[:cut])
    conv.replace_head(cut, [{"role": "user", "content": f"{SUMMARY_PREFIX}\n\n{summary}"}])
    history = conv.meta.setdefault("compactions", [])
    history.append({"time": time.time(), "replaced_messages": cut, "replaced_tokens": before,
                    "summary_tokens": estimate_tokens(conv.messages[0])})
