"""Keep a request inside the context window during a long turn, by cutting tool results from the oldest.

:meth:`Conversation.for_request <swebash_ai.agent.conversation.Conversation.for_request>` drops whole old turns
to fit ``context_tokens``, but always keeps the current turn, and a turn of a hundred steps can outgrow the
window alone. Before each request, :func:`fit` then replaces the content of the current turn's oldest tool
results with :data:`CUT_NOTE` (what was there, and that calling the tool again brings it back) until the
request fits; when the latest results alone are too big, their middle is cut (:data:`MIDDLE_NOTE`), keeping
the head and the tail a model reads first.

Contract: only the request is changed, never the conversation (the saved session keeps every result); tool
messages keep their ids and names, so the request stays valid; and the cut is monotone: as a turn grows, a
result once cut stays cut in every later request (the costs of earlier messages never change, so the oldest
results cut to fit one request are cut again for the next), which keeps the model's view consistent and the
provider's prompt cache valid up to the first newly cut result.
"""

from __future__ import annotations

from collections.abc import Sequence

from swebash_ai.providers.base import Message

CUT_NOTE = ("[swebash-ai: the result of this {name} call ({chars:,} characters) was removed from the conversation "
            "to keep it inside the model's context window. Call the tool again if you still need it.]")
"""What an old tool result says once it is cut from a request."""

MIDDLE_NOTE = ("\n[swebash-ai: {chars:,} characters cut from the middle of this result to keep the conversation "
               "inside the model's context window; ask for a part (a line range, a narrower search) to see it.]\n")

_SMALL = 400
"""Results shorter than this (in characters) are never cut: the note would save nothing."""


def fit(messages: list[Message], costs: Sequence[int], budget: int) -> list[Message]:
    """``messages`` (as sent, their token estimates in ``costs``) cut to fit ``budget`` tokens (see module)."""
    excess = sum(costs) - budget
    if excess <= 0:
        return messages
    out = list(messages)
    tools = [i for i, m in enumerate(out) if m.get("role") == "tool" and isinstance(m.get("content"), str)
             and len(m["content"]) >= _SMALL]
    last_response = _last_response(out)
    for i in tools:  # oldest first; the latest response's results only by their middle, below
        if excess <= 0 or i >= last_response:
            break
        content = out[i]["content"]
        note = CUT_NOTE.format(name=out[i].get("name") or "tool", chars=len(content))
        out[i] = {**out[i], "content": note}
        excess -= (len(content) - len(note)) // 4
    latest = [i for i in tools if i >= last_response]
    while excess > 0 and latest:
        i = max(latest, key=lambda j: len(out[j]["content"]))
        latest.remove(i)
        content = out[i]["content"]
        keep = max(_SMALL, len(content) - excess * 4 - len(MIDDLE_NOTE) - 64)
        if keep >= len(content):
            continue
        cut = len(content) - keep
        head, tail = content[: keep // 2], content[len(content) - (keep - keep // 2):]
        out[i] = {**out[i], "content": head + MIDDLE_NOTE.format(chars=cut) + tail}
        excess -= cut // 4
    return out


def _last_response(messages: list[Message]) -> int:
    """Index of the last assistant message (the response whose results the model has not read yet)."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "assistant":
            return i
    return len(messages)
