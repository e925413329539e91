"""Benchmark: what a long conversation costs each re-layout while a reply streams.

A chat pane (headless, 120x45) holds MESSAGES earlier messages (questions and Markdown answers); then a
reply streams in, 40 paragraphs flushed one by one (garbage collection handled as the app does around a
turn). Printed: the CPU time of Textual's layout passes
during that reply (median, 90th percentile, worst). Every pass arranges every displayed widget, so this
is what grows with the conversation; folding chapters far from the view is what keeps it flat.

    python bench/tui_long_session.py [--messages 400] [--no-fold]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from textual.app import App
from textual.screen import Screen

from swebash_ai.frontends.tui.garbage import collect_garbage, full_collections_held
from swebash_ai.frontends.tui.widgets import chat as chat_module
from swebash_ai.frontends.tui.widgets.chat import Chapter, ChatPane

PARAGRAPH = "word " * 50 + "\n\n"


class Host(App[None]):
    def compose(self) -> Any:
        yield ChatPane(id="chat")


async def run(messages: int) -> tuple[list[float], int, int]:
    passes: list[float] = []
    original = Screen._refresh_layout

    def timed(self: Screen[Any], *args: Any, **kwargs: Any) -> None:
        start = time.thread_time()
        try:
            original(self, *args, **kwargs)
        finally:
            passes.append(time.thread_time() - start)

    Screen._refresh_layout = timed  # type: ignore[method-assign]
    try:
        app = Host()
        async with app.run_test(size=(120, 45)) as pilot:
            chat = app.query_one(ChatPane)
            for i in range(messages // 2):
                chat.add_user(f"question {i}")
                chat.add_assistant(f"Answer {i}\n\n{PARAGRAPH}- one\n- two\n")
                if i % 20 == 0:
                    await pilot.pause()
            await pilot.pause(0.5)
            collect_garbage()  # as the app does after each turn (then freezes what is alive)
            passes.clear()
            with full_collections_held():  # as the app does during a turn
                for i in range(40):
                    await chat.write_reply(f"Paragraph {i}: {PARAGRAPH}")
                    stream = chat._stream
                    assert stream is not None
                    await stream.flush()
                    await pilot.pause(0.03)
                await chat.end_reply()
            chapters = list(chat.query_children(Chapter))
            return passes, len(chapters), sum(chapter.folded for chapter in chapters)
    finally:
        Screen._refresh_layout = original  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=400)
    parser.add_argument("--no-fold", action="store_true", help="never fold chapters (to compare)")
    args = parser.parse_args()
    if args.no_fold:
        chat_module.FOLD_BEYOND = 10**9
    passes, chapters, folded = asyncio.run(run(args.messages))
    ordered = sorted(passes)
    print(f"messages before the reply  {args.messages} ({chapters} chapters, {folded} folded at the end)")
    print(f"layout passes during reply {len(passes)}")
    print(f"layout pass CPU            median {statistics.median(ordered) * 1000:.1f} ms, "
          f"p90 {ordered[int(len(ordered) * 0.9)] * 1000:.1f} ms, worst {ordered[-1] * 1000:.1f} ms")


if __name__ == "__main__":
    main()
