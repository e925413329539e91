"""Early tool execution: a 1 s command whose response keeps streaming 1 s after the call is complete.

One turn through a real session (real ``run_command``, policy, audit) against the scripted server: the first
response is a 1 s command then a ``read_file``, and the server holds the rest of the response for 1 s once the
first call is complete; the second response is a short answer. The command is ``timeout 1 cat wait.fifo``
(a named pipe nobody writes to): it waits 1 s and the read-only classifier allows it outright, as early
execution requires (``sleep`` is not on the read-only list, so it would ask, and wait for the end).
Measured, with early execution on and off (``SWEBASH_AI_TOOLS_EARLY``), in the same run:

* **tool time**: from the moment the first call is complete in the stream to the moment the results go back
  to the model (the next request). Early: about 1 s (the command runs while the response streams); off:
  about 2 s (1 s more of stream, then the 1 s command).
* the turn's wall time, for context.

    python bench/early_tools.py [--rounds 3] [--litellm]

``--litellm`` also measures the litellm lane (Anthropic Messages on the scripted server).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from swebash_ai.agent.events import ToolCallFinished
from swebash_ai.config.settings import load_settings
from swebash_ai.providers.base import Chunk, Message, Provider, ToolCall
from swebash_ai.session import Session
from swebash_ai.testing.fake_server import FakeLLMServer, Reply


class Clock:
    """Wraps the provider: when the first tool call arrived, and when each request started."""

    def __init__(self, inner: Provider) -> None:
        self.inner = inner
        self.model = inner.model
        self.first_call: float | None = None
        self.requests: list[float] = []

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None, tool_choice: str = "auto"
    ) -> AsyncIterator[Chunk]:
        self.requests.append(time.perf_counter())
        async for chunk in self.inner.stream(messages, tools, tool_choice):
            if isinstance(chunk, ToolCall) and self.first_call is None:
                self.first_call = time.perf_counter()
            yield chunk


def provider_for(server: FakeLLMServer) -> Provider:
    if server.dialect == "openai":
        from swebash_ai.providers.http_provider import HttpProvider

        return HttpProvider("openai/fake-model", api_base=server.base_url, api_key="x", retries=0)
    from swebash_ai.providers.litellm_provider import LiteLLMProvider

    return LiteLLMProvider("anthropic/claude-sonnet-4-5", api_base=server.base_url, api_key="x", retries=0)


async def turn(server: FakeLLMServer, early: bool, workdir: Path) -> tuple[float, float]:
    """(tool time, turn wall time) of one turn."""
    os.environ["SWEBASH_AI_TOOLS_EARLY"] = "true" if early else "false"
    server.enqueue(
        Reply.tool_calls([("run_command", {"command": "timeout 1 cat wait.fifo"}),
                          ("read_file", {"path": "notes.txt"})], stall=(0, 1.0)),
        Reply.text("The command finished and the notes say hello."),
    )
    clock = Clock(provider_for(server))
    session = Session(load_settings(), provider=clock, cwd=workdir, probe_ollama=False)
    started = time.perf_counter()
    try:
        async for event in session.run("wait a second and read the notes"):
            # The command ends by its timeout (exit 124); anything else (a denial, a question) spoils the figure.
            if isinstance(event, ToolCallFinished) and (
                event.result.status == "denied" or event.result.exit_code not in (None, 124)
            ):
                raise SystemExit(f"{event.name} did not run as planned: {event.result.text}")
    finally:
        await session.aclose()
    wall = time.perf_counter() - started
    assert clock.first_call is not None and len(clock.requests) == 2, "the script did not run as planned"
    return clock.requests[1] - clock.first_call, wall


async def lane(dialect: str, rounds: int, workdir: Path) -> None:
    with FakeLLMServer(dialect) as server:  # type: ignore[arg-type]
        await turn(server, True, workdir)  # warm up: imports, the connection, the command supervisor
        figures: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
        for _ in range(rounds):
            for early in (True, False):  # interleaved, so both see the same machine load
                figures[early].append(await turn(server, early, workdir))
    name = "httpx lane" if dialect == "openai" else "litellm lane (anthropic)"
    for early in (True, False):
        tool = statistics.median(t for t, _ in figures[early])
        wall = statistics.median(w for _, w in figures[early])
        print(f"{name}, early execution {'on ' if early else 'off'}: tool time {tool:.2f} s "
              f"(call complete -> results sent back), turn {wall:.2f} s  [median of {rounds}]")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--litellm", action="store_true", help="also measure the litellm lane")
    args = parser.parse_args()
    home = tempfile.mkdtemp()
    os.environ["SWEBASH_AI_HOME"] = home
    workdir = Path(tempfile.mkdtemp())
    (workdir / "notes.txt").write_text("hello\n")
    os.mkfifo(workdir / "wait.fifo")
    await lane("openai", args.rounds, workdir)
    if args.litellm:
        await lane("anthropic", args.rounds, workdir)


if __name__ == "__main__":
    asyncio.run(main())
