"""Loop overhead per iteration beyond HTTP time.

A turn of N iterations, each a call of a no-op tool, against the loopback fake server (real HTTP + SSE
through the fast httpx lane), compared with N bare provider requests answered the same way. The difference
divided by N is what the loop itself costs per round trip (validation, policy, events, conversation).

    python bench/loop_overhead.py [N] [PAIRS]

The two run in turn, pair by pair; the ratio of each pair is printed (its median is the figure to quote).

    python bench/loop_overhead.py N --only loop|http

runs one side alone (one turn of N, after the same warm-up), to time the two as whole processes side by side
with an outside timer (``/usr/bin/time``, hyperfine); run it from outside the source tree against an
installed copy (``pip install .``, not editable) to measure what users run.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from swebash_ai.agent import Agent, Conversation, LoopLimits
from swebash_ai.config.settings import load_settings
from swebash_ai.providers.base import ToolCall
from swebash_ai.providers.http_provider import HttpProvider
from swebash_ai.testing.fake_server import FakeLLMServer, Reply
from swebash_ai.tools.registry import ToolContext, ToolRegistry, ToolResult, tool


@tool("fs")
async def noop(ctx: ToolContext, n: int) -> ToolResult:
    """Do nothing.

    Args:
        n: A counter.
    """
    return ToolResult.success("ok")


def responder_for(n: int) -> object:
    count = {"i": 0}

    def respond(body: dict[str, object]) -> Reply:
        count["i"] += 1
        if count["i"] > n:
            return Reply.text("done")
        return Reply.tool_calls([("noop", {"n": count["i"]})])

    return respond


async def loop_run(server: FakeLLMServer, n: int) -> float:
    server.responder = responder_for(n)  # type: ignore[assignment]
    provider = HttpProvider("openai/fake-model", api_base=server.base_url, api_key="x", retries=0)
    settings = load_settings().settings
    agent = Agent(
        provider,
        ToolRegistry([noop]),
        ToolContext(settings, Path.cwd()),
        limits=LoopLimits(max_iterations=n + 1, max_tool_calls=n + 1),
    )
    start = time.perf_counter()
    async for _ in agent.run_turn(Conversation(), "go"):
        pass
    return time.perf_counter() - start


async def http_run(server: FakeLLMServer, n: int) -> float:
    server.responder = responder_for(n)  # type: ignore[assignment]
    provider = HttpProvider("openai/fake-model", api_base=server.base_url, api_key="x", retries=0)
    tools = ToolRegistry([noop]).definitions()
    # The same growing conversation the loop sends (system prompt, calls and results), built by hand.
    from swebash_ai.agent.prompt import build_system_prompt

    messages: list[dict[str, object]] = [
        {"role": "system", "content": build_system_prompt(Path.cwd(), ["noop"])},
        {"role": "user", "content": "go"},
    ]
    start = time.perf_counter()
    for _ in range(n + 1):
        calls = []
        async for chunk in provider.stream(messages, tools):
            if isinstance(chunk, ToolCall):
                calls.append(chunk)
        if calls:
            messages.append({"role": "assistant", "content": None, "tool_calls": [c.to_message() for c in calls]})
            messages.extend({"role": "tool", "tool_call_id": c.id, "name": c.name, "content": "ok"} for c in calls)
    return time.perf_counter() - start


async def main(n: int, pairs: int = 5) -> None:
    import os

    os.environ.setdefault("SWEBASH_AI_HOME", tempfile.mkdtemp())
    with FakeLLMServer("openai") as server:
        await http_run(server, 5)  # warm up: imports, connection pool
        loops, https = [], []
        for _ in range(pairs):
            https.append(await http_run(server, n))
            loops.append(await loop_run(server, n))
    loop_t, http_t = statistics.median(loops), statistics.median(https)
    ratios = sorted(loop / http for loop, http in zip(loops, https, strict=True))
    print(f"iterations per turn          {n}")
    print(f"turn through the loop        {loop_t * 1000:8.1f} ms  ({loop_t / (n + 1) * 1000:.2f} ms per request)")
    print(f"same requests, HTTP only     {http_t * 1000:8.1f} ms  ({http_t / (n + 1) * 1000:.2f} ms per request)")
    print(f"loop overhead per iteration  {(loop_t - http_t) / n * 1000:8.2f} ms  (median of {pairs})")
    print(f"loop / HTTP, pair by pair    median {statistics.median(ratios):.2f}  "
          f"(min {ratios[0]:.2f}, max {ratios[-1]:.2f}; a loaded machine widens the range)")


async def only(n: int, side: str) -> None:
    import os

    os.environ.setdefault("SWEBASH_AI_HOME", tempfile.mkdtemp())
    with FakeLLMServer("openai") as server:
        await http_run(server, 5)  # the same warm-up as main()
        took = await (loop_run(server, n) if side == "loop" else http_run(server, n))
    print(f"{side}: {n} iterations in {took * 1000:.1f} ms")


if __name__ == "__main__":
    if "--only" in sys.argv:
        at = sys.argv.index("--only")
        side, args = sys.argv[at + 1], sys.argv[1:at] + sys.argv[at + 2:]
        if side not in ("loop", "http"):
            raise SystemExit("--only loop or --only http")
        asyncio.run(only(int(args[0]) if args else 100, side))
    else:
        asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 100,
                         int(sys.argv[2]) if len(sys.argv) > 2 else 5))
