"""Benchmark: the headless TUI absorbing 20,000 streamed tokens from the loopback server at full speed.

Prints the total time of the turn (question sent -> answer fully rendered) and, for keypresses typed
during the stream, the time from the key to its echo: the prompt holds the new character AND a frame
showing it has been composed (the frame after the prompt's change; goal: p95 under 30 ms with two CPU-bound
processes beside it, ``--competitors 2``). The time to
the prompt's handler alone is printed too.

Also printed: the CPU the process spent per 1,000 streamed tokens (the UI thread's and the others': the
engine parsing the stream), and the layout passes and frames per 1,000 tokens. These depend little on how
busy the host is, so they compare two versions on a shared machine where the latencies do not.

    python bench/tui_stream.py [--tokens 20000] [--probe-interval 0.02] [--rate TOKENS_PER_SECOND]
                               [--competitors N] [--plain-loop] [--no-typing-pace]

While keys come, the app reads a stream faster than ``TYPING_RATE`` events a second at that pace (the keys get
the CPU; see frontends/tui/engine.py): the keys typed here all through the turn make the full-speed stream
such a one, and "turn total" shows what that costs the stream. ``--no-typing-pace`` measures without it.

``--competitors N`` runs N CPU-bound processes (``while True: pass``) during the measured turn, a busy
host; they are killed when the turn ends, also on Ctrl+C or an error.

``--rate`` paces the server (one token per 1/rate seconds) to see a realistic stream, e.g. 300 for a
fast hosted model (the loopback server reaches about 750 tokens/s at ``--rate 1000``); without it the server
sends as fast as it can: 4,000-6,000 tokens/s here, limited by the app's own parsing, a stress far beyond any
provider.

The server runs in its own process, as a provider does. ``--in-process-server`` runs it on a thread of
the benchmark's process instead: its Python then competes with the UI for the interpreter lock, which no
real provider does.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from textual import events
from textual.screen import Screen

from swebash_ai.testing.fake_server import FakeLLMServer, Reply
from swebash_ai.testing.server_process import fake_server_process


def host_steal() -> tuple[int, int] | None:
    """(steal, total) CPU ticks of the machine so far, from /proc/stat; ``None`` where there is none."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except (OSError, IndexError):
        return None
    ticks = [int(field) for field in fields[:8]]
    return (ticks[7], sum(ticks)) if len(ticks) == 8 else None


def make_answer(tokens: int) -> str:
    """Markdown of about ``tokens`` 4-character tokens: paragraphs, lists and code blocks."""
    words = [f"w{i % 100:02d}" for i in range(tokens)]  # "w42" + space = 4 characters a token
    parts: list[str] = []
    for start in range(0, tokens, 400):
        block = " ".join(words[start:start + 400])
        kind = (start // 400) % 4 if not os.environ.get("PLAIN") else 0
        if kind == 3:
            parts.append("```python\n" + "\n".join(block[i:i + 60] for i in range(0, len(block), 60)) + "\n```")
        elif kind == 2:
            parts.append("\n".join(f"- {block[i:i + 70]}" for i in range(0, len(block), 70)))
        else:
            parts.append(block)
    return "\n\n".join(parts) + "\n"


@contextlib.contextmanager
def competitors(count: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``count`` processes spinning on a CPU each until the block ends (however it ends)."""
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(count):
            procs.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
        yield procs
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait(timeout=10)


def thread_cpu() -> dict[int, float]:
    """CPU seconds (user + system) of each thread of this process so far, by native thread id."""
    import psutil

    return {t.id: t.user_time + t.system_time for t in psutil.Process().threads()}


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(share * len(ordered)) - 1))]


def describe(values: list[float]) -> str:
    return (f"median {statistics.median(values):.1f} ms, p95 {percentile(values, 0.95):.1f} ms, "
            f"worst {max(values):.1f} ms")


@contextlib.contextmanager
def llm_server(script: list[dict[str, object]], in_process: bool) -> Iterator[str]:
    """The loopback server playing ``script`` (see ``Reply.from_json``), in this process or its own; its URL."""
    if in_process:
        with FakeLLMServer("openai") as server:
            server.enqueue(*(Reply.from_json(entry) for entry in script))
            yield server.base_url
        return
    with fake_server_process(script) as url:
        yield url


async def run(tokens: int, probe_interval: float, rate: float = 0.0, in_process_server: bool = False,
              competing: int = 0) -> None:
    from swebash_ai.config.settings import load_settings
    from swebash_ai.frontends.tui import engine
    from swebash_ai.frontends.tui.app import SwebashApp
    from swebash_ai.frontends.tui.widgets.prompt import PromptBar

    answer = make_answer(tokens)
    delay = 1 / rate if rate else 0.0
    # chunk_size=4: one SSE event per token; two warm-up turns first so imports are not measured.
    script: list[dict[str, object]] = [{"text": "warm-up"}, {"text": answer, "chunk_size": 4},
                                       {"text": answer, "chunk_size": 4, "delay": delay}]
    with llm_server(script, in_process_server) as base_url, tempfile.TemporaryDirectory() as home:
        os.environ.update(
            SWEBASH_AI_HOME=home, SWEBASH_AI_MODEL="openai/fake-model", SWEBASH_AI_API_BASE=base_url,
            SWEBASH_AI_API_KEY="sk-bench", SWEBASH_AI_AUDIT="false", OLLAMA_HOST="http://127.0.0.1:9",
        )
        app = SwebashApp(load_settings(), cwd=Path(home), tools=[], probe_ollama=False)

        handled: list[tuple[float, int]] = []  # (when, prompt length) each time the prompt changed
        original = PromptBar.on_text_area_changed

        def spy(self: PromptBar, event: object) -> None:
            handled.append((time.perf_counter(), len(self.input.text)))
            original(self, event)  # type: ignore[arg-type]

        PromptBar.on_text_area_changed = spy  # type: ignore[method-assign]
        frames: list[float] = []  # when each frame was composed (headless: composed, not written)
        display = app._display

        def composed(screen: object, renderable: object) -> None:
            if renderable is not None and not app._batch_count:
                frames.append(time.perf_counter())
            display(screen, renderable)  # type: ignore[arg-type]

        app._display = composed  # type: ignore[method-assign]
        layouts: list[float] = []  # when each layout pass of the screen ran
        relayout = Screen._refresh_layout

        def counted(screen: Screen[object], *args: object, **kwargs: object) -> None:
            layouts.append(time.perf_counter())
            relayout(screen, *args, **kwargs)  # type: ignore[arg-type]

        Screen._refresh_layout = counted  # type: ignore[method-assign]
        pipes: list[engine.EventPipe] = []  # each turn's (the last is the measured one's)
        make_pipe = engine.EventPipe.__init__

        def kept(pipe: engine.EventPipe, *args: Any, **kwargs: Any) -> None:
            make_pipe(pipe, *args, **kwargs)
            pipes.append(pipe)

        engine.EventPipe.__init__ = kept  # type: ignore[method-assign]
        busy_host = contextlib.ExitStack()  # the competitors: closed however the run ends
        with busy_host:
            async with app.run_test(size=(160, 50)) as pilot:
                while not (app.session_ready.is_set() and not app.busy):
                    await asyncio.sleep(0.01)
                for text in ("warm up", "write a lot"):
                    app.prompt.load_text(text)
                    await pilot.press("enter")
                    await asyncio.sleep(0.05)
                    while app.busy:
                        await asyncio.sleep(0.01)
                # The measured turn.
                app.prompt.load_text("stream it")
                delays: list[float] = []  # key -> handled
                echoes: list[float] = []  # key -> handled and a frame composed after it
                driver = app._driver
                assert driver is not None
                busy_host.enter_context(competitors(competing))
                stolen_before = host_steal()
                threads_before = thread_cpu()
                cpu_before = time.process_time()
                start = time.perf_counter()
                driver.send_message(events.Key("enter", "\r"))
                while not app.busy:
                    await asyncio.sleep(0.001)
                while app.busy:
                    # Type one key the way the terminal driver delivers it; wait until the prompt shows it.
                    target = len(app.prompt.text) + 1
                    handled.clear()
                    sent = time.perf_counter()
                    driver.send_message(events.Key("x", "x"))
                    while not any(length >= target for _, length in handled):
                        await asyncio.sleep(0.0005)
                    when = next(t for t, length in handled if length >= target)
                    delays.append((when - sent) * 1000)
                    while not (frames and frames[-1] > when) and app.is_running:
                        await asyncio.sleep(0.0005)
                    shown = next((f for f in reversed(frames) if f > when), None)
                    if shown is not None:  # the first frame after the change (none: the app ended)
                        echoes.append((min(f for f in frames if f > when) - sent) * 1000)
                    await asyncio.sleep(probe_interval)
                total = time.perf_counter() - start
                cpu = time.process_time() - cpu_before
                threads_after = thread_cpu()
                stolen_after = host_steal()
                busy_host.close()
                rendered = app.chat.last_reply_text()
        PromptBar.on_text_area_changed = original  # type: ignore[method-assign]
        Screen._refresh_layout = relayout  # type: ignore[method-assign]
        engine.EventPipe.__init__ = make_pipe  # type: ignore[method-assign]
    during = [t for t in layouts if start <= t <= start + total]
    drawn = [t for t in frames if start <= t <= start + total]

    pace = f"{rate:,.0f} tokens/s" if rate else "full speed"
    print(f"streamed tokens          {tokens} ({len(answer)} characters, one SSE event each, {pace})")
    print(f"competing processes      {competing} (CPU-bound, {os.cpu_count()} CPUs)")
    print(f"turn total               {total:.2f} s  ({tokens / total:,.0f} tokens/s rendered)")
    print(f"answer complete          {rendered.strip() == answer.strip()}")
    if engine.TYPING_QUIET > 0:
        print(f"paced for the typist     {pipes[-1].paced if pipes else 0} sleeps of the engine (at most "
              f"{engine.TYPING_RATE:,.0f} events/s while keys come)")
    else:
        print("paced for the typist     no (--no-typing-pace)")
    ui = threading.get_native_id()
    ui_cpu = threads_after.get(ui, 0.0) - threads_before.get(ui, 0.0)
    print(f"CPU per 1,000 tokens     {1000 * cpu / tokens * 1000:.1f} ms (process), "
          f"{1000 * ui_cpu / tokens * 1000:.1f} ms (UI thread), "
          f"{1000 * (cpu - ui_cpu) / tokens * 1000:.1f} ms (other threads: the engine, the input reader)")
    print(f"per 1,000 tokens         {1000 * len(during) / tokens:.1f} layout passes, "
          f"{1000 * len(drawn) / tokens:.1f} frames")
    if delays:
        print(f"keypresses during stream {len(delays)}")
        print(f"key to echo (frame)      {describe(echoes)} (goal: p95 < 30 ms with --competitors 2)")
        print(f"key to prompt handler    {describe(delays)}")
        quarter = max(1, len(echoes) // 4)
        worst = [f"{max(echoes[i:i + quarter]):.0f}" for i in range(0, quarter * 4, quarter)]
        print(f"worst delay per quarter  {' / '.join(worst)} ms (does it grow with the reply?)")
    if stolen_before is not None and stolen_after is not None:
        stolen, elapsed = (after - before for after, before in zip(stolen_after, stolen_before, strict=True))
        print(f"CPU taken by the host    {100 * stolen / max(1, elapsed):.0f}% during the turn "
              "(steal time: a virtual machine waiting for its CPUs; 0% is a fair run)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=20_000)
    parser.add_argument("--probe-interval", type=float, default=0.02)
    parser.add_argument("--rate", type=float, default=0.0, help="tokens per second from the server (0: full speed)")
    parser.add_argument("--competitors", type=int, default=0,
                        help="CPU-bound processes running during the measured turn (a busy host)")
    parser.add_argument("--in-process-server", action="store_true",
                        help="run the loopback server on a thread of this process (it then competes with the UI)")
    parser.add_argument("--plain-loop", action="store_true",
                        help="run the UI on a plain asyncio loop, which the engine thread cannot watch")
    parser.add_argument("--no-typing-pace", action="store_true",
                        help="read the stream at full speed while keys come (the app paces it, see TYPING_RATE)")
    args = parser.parse_args()
    from swebash_ai.frontends.tui import engine
    from swebash_ai.frontends.tui.engine import watched_loop

    if args.no_typing_pace:
        engine.TYPING_QUIET = 0.0  # nobody counts as typing

    # The loop swebash-ai runs its UI on (see run_tui), unless asked otherwise.
    with asyncio.Runner(loop_factory=None if args.plain_loop else watched_loop) as runner:
        runner.run(run(args.tokens, args.probe_interval, args.rate, args.in_process_server, args.competitors))


if __name__ == "__main__":
    main()
