"""The engine's CPU per streamed token: N tokens (one SSE event each) through the real provider and loop, no UI.

The loopback server runs in a process of its own (as a provider does) and streams an answer of N 4-character
tokens, one SSE event and one HTTP chunk per token. The turn runs as the TUI runs it: the session's events on
the engine thread (:class:`~swebash_ai.frontends.tui.engine.Engine`), handed over through an
:class:`~swebash_ai.frontends.tui.engine.EventPipe` to a loop on the main thread that only counts them. The
figure is the engine thread's CPU per 1,000 tokens (its own clock: the server's CPU is another process's, the
consumer's another thread's). ``--headless`` runs the turn on the main thread with no pipe, as ``-c`` does,
and counts the whole process's CPU.

    python bench/engine_stream.py [--tokens 20000] [--runs 5] [--headless] [--profile [N]]

``--profile`` prints the top N (default 30) functions of a cProfile of the engine over the measured runs,
by own time. CPU per token depends little on how busy the host is, but it still drifts on a shared machine:
compare two versions by running them alternately, several times, and quote the ratio of the medians.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import os
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any


def make_answer(tokens: int) -> str:
    """``tokens`` 4-character tokens ("w42 "): the server sends each as one SSE event (``chunk_size`` 4)."""
    return "".join(f"w{i % 100:02d} " for i in range(tokens))


async def _timed(events: AsyncIterator[Any], sink: Any, profile: cProfile.Profile | None) -> float:
    """Engine side: consume the turn's events into ``sink``; the CPU seconds this thread spent."""
    started = time.thread_time()
    if profile is not None:
        profile.enable()
    try:
        await sink(events)
    finally:
        if profile is not None:
            profile.disable()
    return time.thread_time() - started


async def _piped(session: Any, engine: Any, text: str, profile: cProfile.Profile | None) -> tuple[float, int]:
    """One turn as the TUI runs it: engine thread -> pipe -> this loop. (engine CPU seconds, characters)."""
    from swebash_ai.agent.events import TextDelta
    from swebash_ai.frontends.tui.engine import EventPipe, pump

    pipe = EventPipe(asyncio.get_running_loop())

    async def sink(events: AsyncIterator[Any]) -> None:
        await pump(events, pipe)

    future = engine.submit(_timed(session.run(text), sink, profile))
    chars = 0
    async for batch in pipe.batches():
        chars += sum(len(e.text) for e in batch if isinstance(e, TextDelta))
    return await asyncio.wrap_future(future), chars


async def _headless(session: Any, text: str, profile: cProfile.Profile | None) -> tuple[float, int]:
    """One turn as ``-c`` runs it, on this thread: (process CPU seconds, characters)."""
    from swebash_ai.agent.events import TextDelta

    chars = 0

    async def sink(events: AsyncIterator[Any]) -> None:
        nonlocal chars
        async for event in events:
            if isinstance(event, TextDelta):
                chars += len(event.text)

    before = time.process_time()
    await _timed(session.run(text), sink, profile)
    return time.process_time() - before, chars


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5, help="measured turns (after one warm-up turn)")
    parser.add_argument("--headless", action="store_true", help="no engine thread and pipe (as -c runs)")
    parser.add_argument("--profile", type=int, nargs="?", const=30, default=0, metavar="N",
                        help="print the top N functions of a cProfile of the measured turns")
    args = parser.parse_args()

    from swebash_ai.config.settings import load_settings
    from swebash_ai.frontends.tui.engine import Engine, watched_loop
    from swebash_ai.session import Session
    from swebash_ai.testing.server_process import fake_server_process

    answer = make_answer(args.tokens)
    script = [{"text": answer, "chunk_size": 4} for _ in range(args.runs + 1)]
    profile = cProfile.Profile() if args.profile else None
    with fake_server_process(script) as base_url, tempfile.TemporaryDirectory() as home:
        os.environ.update(
            SWEBASH_AI_HOME=home, SWEBASH_AI_MODEL="openai/fake-model", SWEBASH_AI_API_BASE=base_url,
            SWEBASH_AI_API_KEY="sk-bench", OLLAMA_HOST="http://127.0.0.1:9",
        )
        session = Session(load_settings(), cwd=Path(home), tools=[], probe_ollama=False)
        engine = None if args.headless else Engine()
        loop = asyncio.new_event_loop() if args.headless else watched_loop()

        async def turns() -> list[float]:
            per_1000: list[float] = []
            for run in range(args.runs + 1):
                measured = profile if run else None  # the warm-up turn imports and connects
                if engine is None:
                    cpu, chars = await _headless(session, "stream it", measured)
                else:
                    cpu, chars = await _piped(session, engine, "stream it", measured)
                if chars != len(answer):
                    raise SystemExit(f"the turn streamed {chars} characters, not {len(answer)}")
                if run:
                    per_1000.append(cpu * 1000 / (args.tokens / 1000))
            return per_1000

        try:
            figures = loop.run_until_complete(turns())
            loop.run_until_complete(session.aclose())
        finally:
            loop.close()
            if engine is not None:
                engine.stop()
    where = "process (headless, as -c)" if args.headless else "engine thread (as the TUI runs it)"
    print(f"{where}: CPU per 1,000 tokens: median {statistics.median(figures):.1f} ms "
          f"(runs: {', '.join(f'{f:.1f}' for f in figures)}; {args.tokens} tokens a turn, one SSE event each)")
    if profile is not None:
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(args.profile)
        print(out.getvalue())


if __name__ == "__main__":
    sys.exit(main())
