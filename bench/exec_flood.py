"""Benchmark: memory stays flat while a command floods its output.

Runs ``yes`` and ``cat /dev/urandom | base64`` for 3 s each (timeout) with the default 100 KB cap through
:func:`run_process`, streaming to a no-op ``on_output``, and prints bytes seen, bytes kept, live callback
count and the growth of this process's RSS (sampled every 50 ms; peak minus the level before the run).

    python bench/exec_flood.py [seconds]
"""

from __future__ import annotations

import asyncio
import sys
import tempfile

import psutil

from swebash_ai.tools.process import run_process

COMMANDS = ("yes", "cat /dev/urandom | base64")


async def sample_rss(peak: list[int], stop: asyncio.Event) -> None:
    me = psutil.Process()
    while not stop.is_set():
        peak[0] = max(peak[0], me.memory_info().rss)
        await asyncio.sleep(0.05)


async def one(command: str, seconds: float, cwd: str) -> None:
    me = psutil.Process()
    before = me.memory_info().rss
    peak = [before]
    calls = 0

    def sink(_text: str) -> None:
        nonlocal calls
        calls += 1

    stop = asyncio.Event()
    sampler = asyncio.create_task(sample_rss(peak, stop))
    result = await run_process(command, cwd=cwd, timeout=seconds, max_output=100_000, on_output=sink)
    stop.set()
    await sampler
    seen = result.stdout_bytes + result.stderr_bytes
    kept = len(result.stdout.encode()) + len(result.stderr.encode())
    print(f"{command!r}: {seen / 1e6:,.1f} MB seen ({seen / seconds / 1e6:,.0f} MB/s), {kept:,} bytes kept, "
          f"truncated={result.truncated}, on_output calls: {calls} ({calls / seconds:.1f}/s), "
          f"RSS growth: {(peak[0] - before) / 1e6:.2f} MB (RSS before {before / 1e6:.1f} MB)")


async def main(seconds: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        await one("true", 1, tmp)  # warm up: imports, the executor thread, psutil caches
        for command in COMMANDS:
            await one(command, seconds, tmp)


if __name__ == "__main__":
    asyncio.run(main(float(sys.argv[1]) if len(sys.argv) > 1 else 3.0))
