"""Benchmark: what one short command costs end to end through :func:`run_process` (start, contain, stop).

Runs ``true`` N times and prints the median and p90 wall time, and which containment mechanism held
(``subreaper``: the per-run supervisor, Linux; ``fallback``: process group, marker and snapshots).
GAP seconds pass between commands (as between a model's tool calls), which lets the next command's
supervisor be started ahead of it; with 0 they run back to back.

    python bench/exec_start.py [runs] [gap]
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time

from swebash_ai.tools.process import run_process


async def main(runs: int, gap: float) -> int:
    times: list[float] = []
    mechanism = "?"
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(runs):
            start = time.perf_counter()
            result = await run_process("true", cwd=tmp, timeout=10)
            times.append(time.perf_counter() - start)
            assert result.exit_code == 0, result
            c = getattr(result, "containment", None)
            mechanism = c.mechanism if c is not None else "none"
            await asyncio.sleep(gap)
    times.sort()
    print(f"runs: {runs}, gap: {gap:g} s, containment: {mechanism}")
    print(f"`true` end to end: median {statistics.median(times) * 1000:.1f} ms, "
          f"p90 {times[int(len(times) * 0.9)] * 1000:.1f} ms, min {times[0] * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(asyncio.run(main(int(args[0]) if args else 50, float(args[1]) if len(args) > 1 else 0.2)))
