"""Memory of a long TUI session, against the text it holds.

The app (headless, 120x40) against the loopback server, in a process of its own as a provider is (its parsing
of each request, the whole conversation as JSON, is not the app's memory; ``--in-process-server`` runs it on a
thread instead): TURNS turns, each a question, one ``read_file`` of a 4 KB file and a Markdown answer of about
1 KB. Printed: the resident memory after the warm-up turns and at the end, how much it grew, and the text the
conversation took on meanwhile (messages' content and call arguments, a tool result set aside on disk
included); then the same for each half of the measured turns (memory that levels off, like a cache filling
up to its bound, grows in the first half alone). The goal: the growth is no more than that text.

Every request carries the whole session (``context_tokens`` 2,000,000): the request grows with it to the end
(1.4 MB at turn 300), the old tool results it carries copied into its body from where they are kept on disk
(``swebash_ai.providers.wire``; read back as strings, their few MB a request left the allocators' pages partly
used, memory beyond the text that grew with the session). ``--context-tokens 100000`` (the app's default)
bounds the request as a user's session does, older turns left out (never summarized here: this server answers
no summary request, and the conversation keeps every message, which is what is measured). Runs spread by about
one 1 MB arena of Python's small-object allocator (kept while any object in it lives): run it a few times.

The warm-up (30 turns) ends once the screen holds as many widgets as it ever will: the chat keeps four
chapters of 12 messages and fills a fifth before storing the oldest (two messages a turn: turn 30), the tool
pane 20 entries (turn 20). Before that, memory grows by the widgets being mounted up to those bounds (1.3 MB
from turn 20 to 30), whatever the session's length; ``--warmup 20`` measures it too.

Between two turns the app collects what a user's pause lets it collect (see ``reading``): the turns here
follow one another at once, and without those collections the garbage of hundreds of turns piles up and
stays as resident memory once freed. Where the growth goes (objects, live allocations by line, the
allocators' free memory): ``bench/tui_memory_where.py``.

    python bench/tui_session_memory.py [--turns 300] [--warmup 30] [--context-tokens N] [--in-process-server]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil

from swebash_ai.testing.fake_server import FakeLLMServer, Reply
from swebash_ai.testing.server_process import fake_server_process

ANSWER = "## Findings\n\n" + "The file says what the notes say, in more words. " * 20 + "\n\n- one\n- two\n"


def script(turns: int) -> list[dict[str, Any]]:
    """What the server answers, in order: per turn a ``read_file`` call, then the answer (as :func:`_responder`)."""
    replies: list[dict[str, Any]] = []
    for turn in range(1, turns + 1):
        replies += [{"tool_calls": [["read_file", {"path": f"notes{turn % 7}.txt"}]]},
                    {"text": ANSWER, "chunk_size": 64}]
    return replies


def _responder(server: FakeLLMServer) -> Any:
    def respond(body: dict[str, Any]) -> Reply:
        server.requests.clear()  # the server keeps every request otherwise: not the app's memory
        last = body["messages"][-1]
        if last["role"] == "tool":
            return Reply.text(ANSWER, chunk_size=64)
        turn = sum(1 for m in body["messages"] if m["role"] == "user")
        return Reply.tool_calls([("read_file", {"path": f"notes{turn % 7}.txt"})])

    return respond


def _held(conversation: Any) -> int:
    """The text the conversation holds: contents and calls (as JSON), a tool result set aside on disk
    (``swebash_ai.agent.result_store``) included, read back to count its characters."""
    return sum(len(m.get("content") or "") + len(json.dumps(m.get("tool_calls") or ""))
               for m in conversation.full_messages())


def reading(app: Any, turn: int) -> None:
    """What the app does while the user reads an answer and types the next question, which the turns here do
    not wait for: the collection held off during a turn, run a second after it (``Controller.collect_when_idle``),
    and every ``DEEP_COLLECT_TURNS`` turns the collection of everything, once no key came for a few seconds."""
    from swebash_ai.frontends.tui.controller import DEEP_COLLECT_TURNS
    from swebash_ai.frontends.tui.garbage import collect_everything, collect_garbage

    collect_garbage()
    if turn % DEEP_COLLECT_TURNS == 0:
        collect_everything()


async def _turn(app: Any, pilot: Any, text: str) -> None:
    answers = sum(1 for m in app.session.conversation.messages if m["role"] == "assistant" and m.get("content"))
    app.prompt.load_text(text)
    await pilot.press("enter")
    deadline = time.monotonic() + 60
    while app.busy or answers == sum(1 for m in app.session.conversation.messages
                                     if m["role"] == "assistant" and m.get("content")):
        if time.monotonic() > deadline:
            raise SystemExit(f"a turn did not end (prompt: {app.prompt.text!r})")
        await pilot.pause(0.02)


def settle(app: Any) -> None:
    """What the app does once the user has not typed for a few seconds (``Controller.collect_everything_when_quiet``):
    one collection of everything, frozen objects included. The turns here follow one another at once, so the
    app never finds that quiet moment by itself."""
    from swebash_ai.frontends.tui.garbage import collect_everything

    collect_everything()


async def run(turns: int, warmup: int, workspace: Path) -> list[tuple[int, int, int]]:
    """The session; returns (turn, resident bytes, text held) after the warm-up, half-way and at the end."""
    from swebash_ai.config.settings import load_settings
    from swebash_ai.frontends.tui.app import SwebashApp

    me = psutil.Process()
    app = SwebashApp(load_settings(), cwd=workspace, probe_ollama=False, setup_on_start=False)
    points: list[tuple[int, int, int]] = []
    half = (warmup + turns) // 2
    async with app.run_test(size=(120, 40)) as pilot:
        while not app.session_ready.is_set():
            await pilot.pause(0.05)
        for i in range(turns):
            if i in (warmup, half):
                settle(app)
                points.append((i, me.memory_info().rss, _held(app.session.conversation)))
            await _turn(app, pilot, f"question {i}: what do the notes say?")
            reading(app, i + 1)
        frozen = gc.get_freeze_count()
        settle(app)
        print(f"objects frozen before the last collection: {frozen:,}")
        points.append((turns, me.memory_info().rss, _held(app.session.conversation)))
        return points


WHOLE_SESSION = 2_000_000
"""Tokens of the default request budget: the whole 300-turn session (~450,000) fits."""


def prepare(server: FakeLLMServer | str, root: Path, context_tokens: int | None = None) -> Path:
    """The session's setting under ``root``: a workspace of seven notes, the environment pointing at ``server``
    (in this process it then plays :func:`_responder`; a URL: a server in its own process playing
    :func:`script`), requests of at most ``context_tokens`` (:data:`WHOLE_SESSION` when ``None``); returns the
    workspace."""
    workspace = root / "ws"
    workspace.mkdir()
    for n in range(7):
        (workspace / f"notes{n}.txt").write_text(f"notes {n}: " + "a line of notes about the project\n" * 120)
    os.environ.update(HOME=str(root), SWEBASH_AI_HOME=str(root / ".swebash-ai"),
                      SWEBASH_AI_MODEL="openai/fake-model",
                      SWEBASH_AI_API_BASE=server if isinstance(server, str) else server.base_url,
                      SWEBASH_AI_API_KEY="sk-fake", OLLAMA_HOST="http://127.0.0.1:9",
                      SWEBASH_AI_CONTEXT_TOKENS=str(context_tokens or WHOLE_SESSION),
                      # Older turns are left out of requests, never summarized (this server answers no summary
                      # request): the conversation keeps every message, which is what is measured.
                      SWEBASH_AI_AUTO_COMPACT="false")
    if not isinstance(server, str):
        server.responder = _responder(server)
    return workspace


@contextlib.contextmanager
def llm_server(turns: int, in_process: bool) -> Iterator[FakeLLMServer | str]:
    """The loopback server for ``turns`` turns: in this process, or (a URL) in its own."""
    if in_process:
        with FakeLLMServer("openai") as server:
            yield server
            server.requests.clear()
    else:
        with fake_server_process(script(turns)) as url:
            yield url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=30,
                        help="turns before the measure: the screen's widgets reach their bounds by turn 30")
    parser.add_argument("--in-process-server", action="store_true",
                        help="run the loopback server on a thread of this process (its memory then counts)")
    parser.add_argument("--context-tokens", type=int, default=None,
                        help=f"the request budget (default {WHOLE_SESSION:,}: the whole session each time; the "
                             "app's own default is 100000)")
    args = parser.parse_args()
    with llm_server(args.turns, args.in_process_server) as server, tempfile.TemporaryDirectory() as tmp:
        workspace = prepare(server, Path(tmp), args.context_tokens)
        points = asyncio.run(run(args.turns, args.warmup, workspace))
    mib = 1024 * 1024
    (_, start, held_start), (half, middle, held_middle), (_, end, held_end) = points
    print(f"turns                        {args.turns} (measured from turn {args.warmup}; requests of at most "
          f"{args.context_tokens or WHOLE_SESSION:,} tokens)")
    print(f"resident after the warm-up   {start / mib:7.1f} MiB")
    print(f"resident at the end          {end / mib:7.1f} MiB")
    print(f"growth                       {(end - start) / mib:7.1f} MiB")
    print(f"text taken on meanwhile      {(held_end - held_start) / mib:7.1f} MiB")
    print(f"growth / text                {(end - start) / max(1, held_end - held_start):7.2f}   (goal: <= 1)")
    for name, (a, b, ha, hb) in ((f"turns {args.warmup}-{half}", (start, middle, held_start, held_middle)),
                                 (f"turns {half}-{args.turns}", (middle, end, held_middle, held_end))):
        print(f"{name:<28} growth {(b - a) / mib:5.1f} MiB for {(hb - ha) / mib:4.2f} MiB of text "
              f"({(b - a) / max(1, hb - ha):.2f})")


if __name__ == "__main__":
    sys.exit(main())
