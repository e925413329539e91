"""Rebuild fetch_url's provenance (:class:`~swebash_ai.tools.web_guard.Provenance`) from a resumed conversation.

Deriving, not storing: a list of "known URLs" saved in the session file would be one more thing to trust,
and nothing in it could be checked. The conversation already records where each URL came from, so the
memory is replayed from it, message by message, with the rules the live session applied:

* a user message counts only when the loop marked it as typed by the user (:data:`TYPED`): a compaction
  summary (written by the model) and a ``!command`` message are user messages too, never typed; of a
  ``!command`` (:data:`USER_RAN`) the command line the user typed counts, its output (a tool's) never does;
* a web_search result counts only in the exact shape a successful search returns (the header line, then
  numbered blocks whose second line is the result's URL); titles and snippets never count;
* a fetch_url result counts only when it is a page (its first line is ``URL (type, HTTP status)``) *and*
  the URL of the call that fetched it is covered by what was rebuilt before it: the live session also
  followed the links of pages a person approved, but approvals are not recorded, so those links ask again.

Why this cannot widen what runs unasked: the session file lives in the app's own folder (0600, and a
protected path no tool may read or write), so only the user writes it. Whatever a damaged or edited file
holds, the replay only ever trusts text in a place the user, a search provider or a trusted page put it;
a message whose shape is not recognised adds nothing (fewer URLs, more questions, never more). The model's
own words (assistant messages, call arguments, summaries, error texts echoing its URLs) never count.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from swebash_ai.agent.conversation import TYPED, user_run
from swebash_ai.providers.base import Message
from swebash_ai.tools.web_guard import Provenance, extract_urls

SEARCH_HEADER = 'Web results for "'
_RESULT_BLOCK = re.compile(r"\d+\. [^\n]*\n   (\S+)(?:\n   [^\n]*)?")
_PAGE_HEAD = re.compile(r"https?://\S+ \([^\n]*, HTTP \d{3}\)\n")


def rebuild(messages: Iterable[Message], provenance: Provenance) -> None:
    """Add to ``provenance`` what the live session learnt from ``messages`` (see the module docstring)."""
    calls: dict[str, tuple[str, str]] = {}  # call id -> (tool name, the url argument of a fetch)
    for msg in messages:
        role, content = msg.get("role"), msg.get("content")
        if role == "user" and msg.get(TYPED) is True and isinstance(content, str):
            provenance.add_text(content)
        elif role == "user" and (ran := user_run(msg)) is not None:
            if ran.typed is not None:
                provenance.add_text(ran.typed)
        elif role == "assistant":
            for call in msg.get("tool_calls") or ():
                _remember_call(call, calls)
        elif role == "tool" and isinstance(content, str):
            name, url = calls.pop(str(msg.get("tool_call_id")), ("", ""))
            if name == "web_search":
                for found in search_result_urls(content):
                    provenance.add_url(found)
            elif name == "fetch_url" and provenance.covers(url) and _PAGE_HEAD.match(content):
                provenance.add_text(content.split("\n", 1)[1])


def _remember_call(call: Any, calls: dict[str, tuple[str, str]]) -> None:
    try:
        function = call["function"]
        name, arguments = str(function["name"]), json.loads(function["arguments"])
        call_id = str(call["id"])
    except (TypeError, KeyError, ValueError):
        return  # a damaged call: its result will count for nothing
    url = arguments.get("url") if isinstance(arguments, dict) else None
    calls[call_id] = (name, url if isinstance(url, str) else "")


def search_result_urls(content: str) -> list[str]:
    """The result URLs of a successful web_search's text (:func:`swebash_ai.tools.web.format_results`).

    The query in the header is the model's, but whitespace in it was collapsed to single spaces, so it
    cannot start a block of its own; titles and snippets are single lines, and only a block's second line
    is read. A text of any other shape gives nothing.
    """
    head, sep, body = content.partition("\n\n")
    if not sep or not head.startswith(SEARCH_HEADER) or "\n" in head:
        return []
    urls: list[str] = []
    for block in body.split("\n\n"):
        match = _RESULT_BLOCK.fullmatch(block)
        if match is None:
            return urls  # the shape broke (a cut text): nothing after it is trusted
        found = extract_urls(match.group(1))
        if found == [match.group(1)]:
            urls.append(found[0])
    return urls
