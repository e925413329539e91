"""A request body made of bytes, where a message's content may come straight from a file.

Contract:
    :class:`StoredResult` is a message (a read-only mapping: ``role``, ``tool_call_id``..., ``content``) whose
    content is not in memory but somewhere that can copy it, already as a JSON string, into a buffer: a tool
    result the conversation set aside (:mod:`swebash_ai.agent.result_store`). A provider that builds its own
    request body (the OpenAI-compatible lane, :mod:`~swebash_ai.providers.http_provider`) says so with
    ``reads_stored_results = True``; it then gets these messages, and :func:`request_body` copies each content
    into the body's one buffer. Any other provider gets plain dicts: the conversation reads each text back for
    it.

    A :class:`StoredResult` is not a ``dict``, so ``json.dumps`` refuses it: a path that did not expect one
    fails loudly rather than sending something else. Reading its ``content`` reads the text back.

Why:
    Late in a long session each request carries hundreds of old results. Read back as strings, each made three
    objects per request (the bytes read, the text, the JSON encoder's escaped copy), a few MB of short-lived
    allocations in between the turn's long-lived ones, which left the allocator's pages partly used: memory
    that grew with the session (issue 51, ``bench/tui_session_memory.py``). Copied into the body, a result
    costs the body's bytes alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

__all__ = ["StoredResult", "request_body"]


class StoredResult(Mapping[str, Any]):
    """A message whose ``content`` is a JSON string of ``size`` bytes that ``read_into`` copies into a buffer
    and ``load`` reads back as text; ``fields``: the message's other keys (never a ``content``)."""

    __slots__ = ("fields", "load", "read_into", "size")

    def __init__(self, fields: Mapping[str, Any], size: int, read_into: Callable[[memoryview], None],
                 load: Callable[[], str]) -> None:
        self.fields = fields
        self.size = size
        self.read_into = read_into
        self.load = load

    def __getitem__(self, key: str) -> Any:
        if key == "content":
            return self.load()
        return self.fields[key]

    def __iter__(self) -> Iterator[str]:
        yield from self.fields
        yield "content"

    def __len__(self) -> int:
        return len(self.fields) + 1

    def __repr__(self) -> str:
        return f"StoredResult({dict(self.fields)!r}, content: {self.size:,} bytes of JSON)"


def _dumps(value: Any) -> str:
    # What httpx does with ``json=``: compact, UTF-8, no NaN.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def request_body(body: Mapping[str, Any]) -> bytes:
    """``body`` (with its ``messages``) as the JSON bytes httpx would send for it, every :class:`StoredResult`'s
    content copied into place from where it is kept.

    The body grows in one buffer, each message's piece made and let go in turn: at most the body twice over
    (the buffer and the bytes returned), as httpx's own encoding (a string, then its bytes)."""
    data = bytearray(b'{"messages":[')
    for i, message in enumerate(body.get("messages") or ()):
        if i:
            data += b","
        if isinstance(message, StoredResult):
            head = _dumps(message.fields)
            data += (head[:-1] + ("," if len(head) > 2 else "") + '"content":').encode("utf-8")
            at = len(data)
            data += bytes(message.size)
            with memoryview(data) as view:
                message.read_into(view[at:])
            data += b"}"
        else:
            data += _dumps(message).encode("utf-8")
    rest = _dumps({k: v for k, v in body.items() if k != "messages"})
    data += b"]" + (b"," + rest[1:].encode("utf-8") if len(rest) > 2 else b"}")
    return bytes(data)
