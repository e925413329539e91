"""Benchmark: the whole TUI with a long session of questions, Markdown answers and tool calls.

A saved session of TURNS turns is written the way the app writes one (each turn: a question, an
assistant message that says a word and calls CALLS tools, their results with a few lines of output, and a
Markdown answer), then the app is started on it with ``--resume`` (headless, 160x50). Printed:

* the time until the resumed conversation is shown (and the CPU time the process took meanwhile, a figure
  a busy host inflates less), the resident memory (RSS) and the number of widgets
  in the DOM (chat pane, tool pane) after the load;
* the same after MORE further turns grown live (the controller handling the events a turn produces:
  streamed text, tool calls with output, results; the garbage collections the app runs after them);
* the CPU time of Textual's layout passes while one more reply streams (40 paragraphs flushed one by
  one, garbage collection handled as the app does around a turn): median, 90th percentile, worst.

    python bench/tui_resume_session.py [--turns 334] [--calls 3] [--more 100]

The defaults give about 1,000 chat messages and 1,000 tool calls. Goals: layout passes under 16 ms and
memory and widget count that do not grow with the history.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psutil
from textual.screen import Screen

ANSWER = ("Here is what I found in **{name}**:\n\n"
          "- the loop reads `config.toml` first\n- then the environment\n\n"
          "```python\ndef load(path):\n    return toml.loads(path.read_text())\n```\n\n"
          + "word " * 60 + "\n")
OUTPUT = "".join(f"line {i}: some output of the command, long enough to wrap once or twice\n" for i in range(12))
PARAGRAPH = "word " * 50 + "\n\n"


def write_session(folder: Path, turns: int, calls: int) -> str:
    """A saved session file like the app writes; its id."""
    session_id = "bench-long-session"
    folder.mkdir(parents=True, exist_ok=True)
    lines = [{"meta": {"id": session_id, "created": time.time(), "title": "long"}}]
    for t in range(turns):
        lines.append({"role": "user", "content": f"question {t}: what does module {t} do?"})
        tool_calls = [{"id": f"call-{t}-{c}", "type": "function",
                       "function": {"name": "exec", "arguments": json.dumps({"command": f"grep -rn thing{c} src/"})}}
                      for c in range(calls)]
        lines.append({"role": "assistant", "content": "Let me look.", "tool_calls": tool_calls})
        for c in range(calls):
            lines.append({"role": "tool", "tool_call_id": f"call-{t}-{c}", "name": "exec", "content": OUTPUT})
        lines.append({"role": "assistant", "content": ANSWER.format(name=f"module {t}")})
    path = folder / f"{session_id}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return session_id


def widget_counts(app: Any) -> tuple[int, int, int]:
    """Widgets in the DOM: whole screen, chat pane, tool pane."""
    return (len(list(app.screen.walk_children(with_self=True))),
            len(list(app.chat.walk_children(with_self=True))),
            len(list(app.activity.walk_children(with_self=True))))


def rss_mb() -> float:
    return psutil.Process().memory_info().rss / 2**20


async def live_turn(app: Any, pilot: Any, n: int, calls: int) -> None:
    """One turn as the controller renders it: question, text, tool calls with output, answer."""
    from swebash_ai.agent import events as ev
    from swebash_ai.frontends.tui.controller import DEEP_COLLECT_TURNS
    from swebash_ai.frontends.tui.garbage import collect_everything
    from swebash_ai.tools.registry import ToolResult

    handle = app.controller.handle
    app.chat.add_user(f"live question {n}")
    await handle(ev.TextDelta("Let me look."))
    for c in range(calls):
        call_id = f"live-{n}-{c}"
        await handle(ev.ToolCallStarted(call_id, "exec", {"command": f"grep -rn x{c} ."}, f"$ grep -rn x{c} ."))
        await handle(ev.ToolOutput(call_id, OUTPUT))
        await handle(ev.ToolCallFinished(call_id, "exec", ToolResult.success(OUTPUT, exit_code=0, duration=0.1)))
    for chunk in ANSWER.format(name=f"live {n}").split(" "):
        await handle(ev.TextDelta(chunk + " "))
    await app.chat.end_reply()
    await pilot.pause()
    app.controller.collect_when_idle()  # as the app does a second after each turn
    if (n + 1) % DEEP_COLLECT_TURNS == 0:  # as the app does every few turns, once the user is quiet
        collect_everything()


async def run(turns: int, calls: int, more: int, size: tuple[int, int]) -> None:
    from swebash_ai.config.settings import load_settings
    from swebash_ai.frontends.tui.app import SwebashApp
    from swebash_ai.frontends.tui.garbage import collect_garbage, full_collections_held
    from swebash_ai.frontends.tui.widgets.chat import Chapter

    passes: list[float] = []
    original = Screen._refresh_layout

    def timed(self: Screen[Any], *args: Any, **kwargs: Any) -> None:
        start = time.thread_time()
        try:
            original(self, *args, **kwargs)
        finally:
            passes.append(time.thread_time() - start)

    with tempfile.TemporaryDirectory() as home:
        os.environ.update(SWEBASH_AI_HOME=home, SWEBASH_AI_AUDIT="false", OLLAMA_HOST="http://127.0.0.1:9")
        loaded = load_settings()
        session_id = write_session(loaded.locations.sessions_dir, turns, calls)
        rss_before = rss_mb()
        app = SwebashApp(loaded, cwd=Path(home), tools=[], probe_ollama=False, resume=session_id)
        Screen._refresh_layout = timed  # type: ignore[method-assign]
        try:
            start, cpu = time.perf_counter(), time.process_time()
            async with app.run_test(size=size) as pilot:
                while not app.session_ready.is_set():
                    await asyncio.sleep(0.01)
                await pilot.pause()
                loaded_after, loaded_cpu = time.perf_counter() - start, time.process_time() - cpu
                await pilot.pause(0.5)
                collect_garbage()
                mounted = sum(1 for _ in app.chat.messages())
                stored = sum(len(chapter) for chapter in app.chat._stored)
                print(f"resumed session          {turns} turns: {mounted + stored} chat messages "
                      f"({mounted} as widgets, {stored} stored behind the 'earlier' line), "
                      f"{turns * calls} tool calls")
                print(f"resume to shown          {loaded_after:.2f} s (CPU {loaded_cpu:.2f} s, every thread)")
                screen, chat, tools = widget_counts(app)
                print(f"after the load           RSS {rss_mb():.0f} MB (+{rss_mb() - rss_before:.0f}); widgets "
                      f"{screen} (chat {chat}, tools {tools})")
                for n in range(more):
                    await live_turn(app, pilot, n, calls)
                await pilot.pause(0.5)
                collect_garbage()
                screen, chat, tools = widget_counts(app)
                print(f"after {more} more turns     RSS {rss_mb():.0f} MB (+{rss_mb() - rss_before:.0f}); widgets "
                      f"{screen} (chat {chat}, tools {tools}); tool calls {turns * calls + more * calls}")
                passes.clear()
                with full_collections_held():
                    for i in range(40):
                        await app.chat.write_reply(f"Paragraph {i}: {PARAGRAPH}")
                        stream = app.chat._stream
                        assert stream is not None
                        await stream.flush()
                        await pilot.pause(0.03)
                    await app.chat.end_reply()
                chapters = list(app.chat.query_children(Chapter))
                folded = sum(chapter.folded for chapter in chapters)
        finally:
            Screen._refresh_layout = original  # type: ignore[method-assign]
    ordered = sorted(passes)
    print(f"chapters                 {len(chapters)} ({folded} folded)")
    print(f"layout passes in reply   {len(passes)}: CPU median {statistics.median(ordered) * 1000:.1f} ms, "
          f"p90 {ordered[int(len(ordered) * 0.9)] * 1000:.1f} ms, worst {ordered[-1] * 1000:.1f} ms (goal < 16 ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=334, help="turns in the saved session")
    parser.add_argument("--calls", type=int, default=3, help="tool calls per turn")
    parser.add_argument("--more", type=int, default=100, help="turns grown live after the resume")
    args = parser.parse_args()
    from swebash_ai.frontends.tui.engine import watched_loop

    with asyncio.Runner(loop_factory=watched_loop) as runner:
        runner.run(run(args.turns, args.calls, args.more, (160, 50)))


if __name__ == "__main__":
    main()
