"""Five concurrent calls of a 1 s tool in one model response: wall time of the whole turn.

Serial execution would take about 5 s; bounded-parallel execution (SWEBASH_AI_TOOLS_PARALLEL, default 4)
about 2 s; with parallel >= 5 about 1 s. Prints all three.

    python bench/parallel_tools.py
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path

from swebash_ai.agent import Agent, Conversation, LoopLimits
from swebash_ai.config.settings import load_settings
from swebash_ai.providers.http_provider import HttpProvider
from swebash_ai.testing.fake_server import FakeLLMServer, Reply
from swebash_ai.tools.registry import ToolContext, ToolRegistry, ToolResult, tool


@tool("exec")
async def wait_one_second(ctx: ToolContext, label: str) -> ToolResult:
    """Sleep one second.

    Args:
        label: Which call this is.
    """
    await asyncio.sleep(1.0)
    return ToolResult.success(label)


async def turn(server: FakeLLMServer, parallel: int) -> float:
    server.enqueue(
        Reply.tool_calls([("wait_one_second", {"label": str(i)}) for i in range(5)]),
        Reply.text("all done"),
    )
    provider = HttpProvider("openai/fake-model", api_base=server.base_url, api_key="x", retries=0)
    agent = Agent(
        provider,
        ToolRegistry([wait_one_second]),
        ToolContext(load_settings().settings, Path.cwd()),
        limits=LoopLimits(parallel=parallel),
    )
    start = time.perf_counter()
    async for _ in agent.run_turn(Conversation(), "go"):
        pass
    return time.perf_counter() - start


async def main() -> None:
    os.environ.setdefault("SWEBASH_AI_HOME", tempfile.mkdtemp())
    with FakeLLMServer("openai") as server:
        await turn(server, 5)  # warm up imports and the connection
        for parallel in (1, 4, 5):
            wall = await turn(server, parallel)
            print(f"5 x 1 s tool, parallel={parallel}: turn wall time {wall:.3f} s")


if __name__ == "__main__":
    asyncio.run(main())
