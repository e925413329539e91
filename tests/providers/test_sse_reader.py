"""Our server-sent-event reader gives the data httpx-sse gives, for any stream cut anywhere.

The reference is httpx-sse's ``aiter_sse`` over a real ``httpx.Response`` fed the same blocks of bytes: every
event with data, in order, the same text. The streams mix multi-line data, ``\\r\\n``/``\\r``/``\\n`` line ends,
comments, ``event``/``id``/``retry`` and unknown fields, data lines without a colon or a space, characters of
every width (and bytes that are not UTF-8), cut at random byte offsets (mid-line, mid-``\\r\\n``,
mid-character), with or without a blank line at the end.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator

import httpx
import pytest
from httpx_sse import EventSource
from hypothesis import given, settings
from hypothesis import strategies as st

from swebash_ai.providers.sse import event_data


async def _blocks(blocks: list[bytes]) -> AsyncIterator[bytes]:
    for block in blocks:
        yield block


def reference(blocks: list[bytes]) -> list[str]:
    async def read() -> list[str]:
        response = httpx.Response(200, headers={"content-type": "text/event-stream"}, content=_blocks(blocks))
        return [event.data async for event in EventSource(response).aiter_sse() if event.data]

    return asyncio.run(read())


def ours(blocks: list[bytes]) -> list[str]:
    async def read() -> list[str]:
        return [data async for data in event_data(_blocks(blocks))]

    return asyncio.run(read())


characters = st.characters(exclude_characters="\r\n", exclude_categories=["Cs"])  # of every width
values = st.text(alphabet=characters, max_size=20).map(lambda t: t.encode())
raw = st.binary(max_size=6).filter(lambda b: b"\r" not in b and b"\n" not in b)  # not UTF-8, often
lines = st.one_of(
    st.builds(lambda v: b"data: " + v, values),
    st.builds(lambda v: b"data:" + v, values),
    st.builds(lambda v: b"data:  " + v, values),
    st.just(b"data"),
    st.just(b"data:"),
    st.builds(lambda v: b"data: " + v, raw),
    st.builds(lambda v: b":" + v, values),  # a comment
    st.builds(lambda v: b"event: " + v, values),
    st.builds(lambda v: b"id: " + v, st.one_of(values, st.just(b"a\0b"))),
    st.sampled_from([b"retry: 3000", b"retry: soon", b"Data: no", b"dat", b"data : no", b"\xef\xbb\xbfdata: bom"]),
    st.just(b""),  # a blank line: the event is dispatched
    st.just(b""),
)
ends = st.sampled_from([b"\n", b"\r\n", b"\r"])


@st.composite
def cut_stream(draw: st.DrawFn) -> list[bytes]:
    body = b"".join(line + draw(ends) for line in draw(st.lists(lines, max_size=30)))
    if draw(st.booleans()):
        body += draw(st.sampled_from([b"data: unfinished", b"data: no blank line after\n", b"\r", b"\n"]))
    cuts = sorted(draw(st.lists(st.integers(0, len(body)), max_size=12)))
    edges = [0, *cuts, len(body)]
    return [body[a:b] for a, b in itertools.pairwise(edges) if b > a]


@settings(max_examples=1500, deadline=None)
@given(cut_stream())
def test_any_stream_cut_anywhere_gives_the_data_httpx_sse_gives(blocks: list[bytes]) -> None:
    assert ours(blocks) == reference(blocks)


@pytest.mark.parametrize("blocks", [
    pytest.param([b'data: {"a":1}\n\n', b"data: x\n", b"\n"], id="one event a block, and one cut"),
    pytest.param([b"data: a\r", b"\ndata: b\r\n\r\n"], id="\\r\\n cut between its two bytes"),
    pytest.param([b"data: x\r", b"\r"], id="\\r alone ends lines"),
    pytest.param([b"data: x\n\r"], id="a blank line ended by the body's last \\r"),
    pytest.param([b"da", b"ta: \xe2\x82", b"\xac\n\n"], id="a character cut across blocks"),
    pytest.param([b": c\nevent: e\nid: 1\ndata\ndata: y\n\n"], id="fields, a comment, data without a colon"),
    pytest.param([b"data: a\n\ndata: b"], id="the last event never closed"),
    pytest.param([b"data: ", b"x" * 5, b"y" * 5, b"\n\n"], id="a line in many blocks"),
])
def test_known_cases(blocks: list[bytes]) -> None:
    assert ours(blocks) == reference(blocks)
    assert ours(blocks)  # each of them carries an event
