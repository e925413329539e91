"""The data of server-sent events, read straight from the response's bytes (the httpx lane's event reader).

Contract: :func:`event_data` takes the body as it arrives (blocks of bytes cut anywhere: mid-line, mid-``\\r\\n``,
mid-character) and yields the ``data`` of each event that has any, as the WHATWG rules for an event stream
define it: lines end at ``\\r\\n``, ``\\n`` or ``\\r``; a blank line dispatches the event; a line starting with
``:`` is a comment; ``data`` lines (one space after the colon dropped) join with ``\\n``; ``event``, ``id``,
``retry`` and unknown fields are read past (the chat completions stream carries everything in its data); an
event not closed by a blank line when the body ends is not dispatched. The text is UTF-8 (the rules allow no
other), malformed bytes replaced. For every stream it yields what httpx-sse's ``aiter_sse`` yields as the
non-empty ``data`` of its events (a Hypothesis test compares the two on random streams cut at random places).

Why our own reader rather than httpx-sse's: a model's answer arrives one event per token, and httpx-sse turns
each into text through httpx's decoder, then lines, then a field-by-field event object; that took more of the
engine's time per token than everything of ours put together after it. Here a block that holds whole lines
(nearly always one event) is split once, and only the data is decoded. httpx-sse still opens the stream.
"""

from __future__ import annotations

from collections.abc import AsyncIterator


async def event_data(blocks: AsyncIterator[bytes]) -> AsyncIterator[str]:
    """The ``data`` of each dispatched event of the stream whose body is ``blocks`` (see the module doc)."""
    held: list[bytes] = []  # the start of a line whose end has not arrived
    data: list[bytes] = []  # the data lines of the event being read
    async for block in blocks:
        if b"\r" in block or (held and held[-1].endswith(b"\r")):
            lines, rest = _split_any(b"".join(held) + block if held else block)
        elif b"\n" in block:
            lines = (b"".join(held) + block if held else block).split(b"\n")
            rest = lines.pop()
        else:
            held.append(block)
            continue
        held = [rest] if rest else []
        for line in lines:
            if not line:
                if data:
                    text = (data[0] if len(data) == 1 else b"\n".join(data)).decode("utf-8", "replace")
                    data = []
                    if text:
                        yield text
            elif line[:5] == b"data:":
                data.append(line[6:] if line[5:6] == b" " else line[5:])
            elif line == b"data":
                data.append(b"")
    if held == [b"\r"] and data:  # a blank line ended by a \r, the body's last byte: it dispatches
        text = b"\n".join(data).decode("utf-8", "replace")
        if text:
            yield text


def _split_any(text: bytes) -> tuple[list[bytes], bytes]:
    """Lines ended by ``\\r\\n``, ``\\n`` or ``\\r`` (without their ends), and what follows the last end. A
    final ``\\r`` is left with the rest: the next block may start with the ``\\n`` that completes it."""
    lines = text.splitlines(keepends=True)  # for bytes: \r\n, \n and \r only
    rest = lines.pop() if lines and not lines[-1].endswith(b"\n") else b""  # unended, or ended by a lone \r
    return [line.rstrip(b"\r\n") for line in lines], rest
