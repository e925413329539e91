"""Benchmark: how fast a timed-out command tree is killed, and whether anything survives.

Runs a tree of sleepers (a background job, a subshell orphan, a ``setsid`` grandchild that leaves the
process group, the shell) 10 times with a 1 s timeout through :func:`run_process`, and prints the time to
return (mean, max overshoot over 1 s) and the number of processes of those trees still alive (must be 0).

    python bench/exec_timeout.py [runs]
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psutil

from swebash_ai.tools.process import run_process


def tree(pids: Path) -> str:
    return (
        f"sleep 100 & echo $! >> {pids}; (sleep 100 & echo $! >> {pids}); "
        f"setsid sleep 100 & echo $! >> {pids}; echo $$ >> {pids}; sleep 100 & echo $! >> {pids}; wait"
    )


async def main(runs: int) -> int:
    times: list[float] = []
    recorded: list[int] = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(runs):
            pids = Path(tmp) / f"pids{i}"
            start = time.monotonic()
            result = await run_process(tree(pids), cwd=tmp, timeout=1)
            times.append(time.monotonic() - start)
            assert result.timed_out, result
            recorded += [int(x) for x in pids.read_text().split()]
    alive = [p for p in recorded if psutil.pid_exists(p)]
    print(f"runs: {runs}, processes per tree: {len(recorded) // runs}, timeout: 1 s")
    print(f"time to return: mean {statistics.mean(times):.3f} s, min {min(times):.3f} s, "
          f"max {max(times):.3f} s (max overshoot {max(times) - 1:.3f} s)")
    print(f"survivors: {len(alive)} of {len(recorded)}")
    return 1 if alive else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)))
