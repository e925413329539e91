"""Property: a reply streamed in any chunks, flushed at any moments, renders exactly as the same Markdown
shown at once (a resumed answer: one :class:`AssistantMessage` of the whole text).

The stream commits complete blocks only and starts new segments between two blocks, where the renderer
cuts its blocks (widgets/blocks.py); were it to cut anywhere else (inside a list item continued after a
blank line, inside a code fence), the pieces would render differently from the whole.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from swebash_ai.frontends.tui.widgets import stream as stream_module
from swebash_ai.frontends.tui.widgets.blocks import block_starts, split_blocks
from swebash_ai.frontends.tui.widgets.chat import ChatPane
from swebash_ai.frontends.tui.widgets.reply import AssistantMessage
from swebash_ai.frontends.tui.widgets.stream import ReplyStream
from tests.tui.tui_helpers import ChatHost

pytestmark = pytest.mark.timeout(300)

words = st.lists(st.sampled_from(["alpha", "beta", "`code`", "**bold**", "gamma", "x", "delta-epsilon", "42"]),
                 min_size=1, max_size=25).map(" ".join)
paragraph = st.lists(words, min_size=1, max_size=3).map("\n".join)
heading = st.tuples(st.integers(1, 3), words).map(lambda t: "#" * t[0] + " " + t[1])
item = st.tuples(words, st.sampled_from(["", "\n  continued", "\n  - nested", "\n\n  a second paragraph"])).map("".join)
bullets = st.lists(item, min_size=1, max_size=4).map(lambda items: "\n".join(f"- {i}" for i in items))
numbered = st.lists(words, min_size=1, max_size=4).map(
    lambda items: "\n".join(f"{n}. {i}" for n, i in enumerate(items, 1)))
code_line = st.sampled_from(["x = 1", "", "    return x", "# not a heading", "- not a list", "~~~"])
code = st.tuples(st.sampled_from(["python", "", "bash"]), st.lists(code_line, max_size=6)).map(
    lambda t: f"```{t[0]}\n" + "".join(line + "\n" for line in t[1]) + "```")
quote = words.map(lambda w: "> " + w)
block = st.one_of(paragraph, heading, bullets, numbered, code, quote, st.just("---"))
markdowns = st.tuples(st.lists(block, min_size=1, max_size=8), st.sampled_from(["\n\n", "\n\n\n"]),
                      st.sampled_from(["", "\n"])).map(lambda t: t[1].join(t[0]) + t[2])


@st.composite
def streamed(draw: st.DrawFn) -> tuple[str, list[tuple[str, bool]]]:
    """Markdown, and the chunks it arrives in, each with whether a flush comes right after it."""
    text = draw(markdowns)
    cuts = sorted(set(draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=12))))
    bounds = [0, *[c for c in cuts if c < len(text)], len(text)]
    flushes = draw(st.lists(st.booleans(), min_size=len(bounds), max_size=len(bounds)))
    return text, [(text[a:b], flushes[i]) for i, (a, b) in enumerate(itertools.pairwise(bounds))]


class ChatOnLoop:
    """One chat app (headless) on a loop that runs while an example is checked: a synchronous Hypothesis
    test drives it example after example without starting an app for each."""

    def __init__(self) -> None:
        self.app = ChatHost()
        self.loop = asyncio.new_event_loop()
        self._ready: asyncio.Future[None] = self.loop.create_future()
        self._stop = asyncio.Event()
        self._task = self.loop.create_task(self._main())

    async def _main(self) -> None:
        async with self.app.run_test(size=(70, 30)) as pilot:
            self.pilot = pilot
            await pilot.pause()
            self._ready.set_result(None)
            await self._stop.wait()

    def __enter__(self) -> ChatOnLoop:
        self.loop.run_until_complete(asyncio.wait([self._ready, self._task], return_when=asyncio.FIRST_COMPLETED))
        if self._task.done():
            self._task.result()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self.loop.run_until_complete(self._task)
        self.loop.close()


@pytest.fixture(scope="module")
def chat_app() -> Iterator[ChatOnLoop]:
    with ChatOnLoop() as driven:
        yield driven


async def _render_both(driven: ChatOnLoop, chunks: list[tuple[str, bool]]) -> tuple[list[str], list[str]]:
    app = driven.app
    with app._context():  # the app's context variables, as in its own tasks (rendering reads them)
        return await _render_in_app(driven, chunks)


async def _render_in_app(driven: ChatOnLoop, chunks: list[tuple[str, bool]]) -> tuple[list[str], list[str]]:
    app, pilot = driven.app, driven.pilot
    await app.query_one(ChatPane).remove()
    chat = ChatPane(id="chat")
    await app.mount(chat)
    await pilot.pause()
    for chunk, flush in chunks:
        await chat.write_reply(chunk)
        if flush and chat._stream is not None:
            await chat._stream.flush()
    await chat.end_reply()
    segments = chat._last_reply
    whole = AssistantMessage("".join(chunk for chunk, _ in chunks))
    await chat.append(whole)
    await pilot.pause()
    streamed_lines: list[str] = []
    for segment in segments:
        assert segment.size.width == whole.size.width
        lines = segment.text_lines()
        if streamed_lines and lines:
            streamed_lines.append("")  # one blank line between two blocks, as inside one message
        streamed_lines.extend(lines)
    return streamed_lines, whole.text_lines()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(example=streamed())
def test_a_reply_streamed_in_any_chunks_renders_as_the_whole(chat_app: ChatOnLoop,
                                                             example: tuple[str, list[tuple[str, bool]]]) -> None:
    text, chunks = example
    streamed_lines, whole_lines = chat_app.loop.run_until_complete(_render_both(chat_app, chunks))
    assert streamed_lines == whole_lines, text


def test_small_segments_split_between_blocks_and_render_as_the_whole(chat_app: ChatOnLoop,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Many segments (a small segment size): each starts at a block, and together they render as the whole."""
    monkeypatch.setattr(stream_module, "SEGMENT_CHARS", 40)
    text = "".join(f"- item {i}\n\n  its second paragraph\n\n```\ncode {i}\n\nmore\n```\n\n" for i in range(8))
    chunks = [(text[i:i + 7], i % 3 == 0) for i in range(0, len(text), 7)]
    streamed_lines, whole_lines = chat_app.loop.run_until_complete(_render_both(chat_app, chunks))
    assert streamed_lines == whole_lines
    chat = chat_app.app.query_one(ChatPane)
    segments = chat._last_reply
    assert len(segments) > 4
    assert all(split_blocks(s.source) and "".join(split_blocks(s.source)) == s.source for s in segments)


def test_a_commit_takes_complete_blocks_only_however_long_the_unfinished_rest() -> None:
    """A block is complete once a line at the margin follows its blank line; a long unfinished rest (a
    stream far behind) does not change where the commit ends."""
    text = "para\n\n" * 10 + "x" * 1_000_000
    assert ReplyStream._next_cut(text, final=False) == len("para\n\n") * 10
    assert ReplyStream._next_cut("- item\n\n", final=False) == 0  # the next line may continue the item
    assert ReplyStream._next_cut("- item\n\n  more\n\nnext", final=False) == len("- item\n\n  more\n\n")
    assert list(itertools.islice(block_starts(text), 3)) == [6, 12, 18]
