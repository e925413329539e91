"""Recovery of printed calls: once an answer has begun as prose, every later piece passes straight through.

Whatever follows the prose (JSON that looks like a call, fences, blank or empty pieces), it is passed on piece
by piece, unchanged and in order, and nothing in it becomes a call: only an answer that is exactly one call
is recovered.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from swebash_ai.providers.base import Chunk, FinishChunk, TextChunk, ToolCall
from swebash_ai.providers.scripted import ScriptedProvider
from swebash_ai.providers.text_tools import TextToolCallProvider

TOOLS: list[dict[str, Any]] = [{"type": "function", "function": {"name": "read_file", "parameters": {}}}]
CALL = '{"name": "read_file", "arguments": {"path": "a.txt"}}'

blank = st.sampled_from(["", " ", "\n", "  \n"])
later = st.one_of(st.text(max_size=8), blank, st.sampled_from([CALL, "```json\n", CALL + "\n```", "{", "[", "`"]))


def read(pieces: list[str]) -> list[Chunk]:
    provider = TextToolCallProvider(ScriptedProvider([[*(TextChunk(p) for p in pieces), FinishChunk("stop")]]))

    async def run() -> list[Chunk]:
        return [chunk async for chunk in provider.stream([{"role": "user", "content": "q"}], TOOLS)]

    return asyncio.run(run())


@settings(max_examples=300, deadline=None)
@given(st.lists(blank, max_size=3), st.sampled_from(["The file", "Done.", "a"]), st.lists(later, max_size=12))
def test_after_prose_every_piece_passes_through_as_it_came(before: list[str], prose: str, after: list[str]) -> None:
    chunks = read([*before, prose, *after])
    texts = [c.text for c in chunks if isinstance(c, TextChunk)]
    assert texts == ["".join(before) + prose, *(p for p in after if p)]  # the blanks before are released with it
    assert not [c for c in chunks if isinstance(c, ToolCall)]
    assert chunks[-1] == FinishChunk("stop")


def test_an_answer_that_is_only_a_call_is_still_recovered() -> None:
    chunks = read([" ", CALL[:10], CALL[10:]])
    assert [c.name for c in chunks if isinstance(c, ToolCall)] == ["read_file"]
    assert not [c for c in chunks if isinstance(c, TextChunk)]
