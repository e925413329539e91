"""Benchmark: what the undo snapshots add to an approved command.

Runs ``true`` through the exec tool 12 times allowed by rule (no snapshot) and 12 times approved (a snapshot
of the workspace before and after, into a fresh snapshot repository), in the given workspace (default: this
repository), and prints the first and the median duration of each. The first approved run pays for hashing
every file once; later ones re-read only files whose stat data changed.

    python bench/undo_snapshot.py [workspace]
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from swebash_ai.config.settings import Settings
from swebash_ai.tools.checkpoints import Checkpoints
from swebash_ai.tools.exec import run_command
from swebash_ai.tools.registry import ToolContext


async def main(workspace: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Checkpoints(Path(tmp) / "s.checkpoints", turn=1)
        for label, approved in (("allowed by rule, no snapshot", False), ("approved, with snapshots", True)):
            ctx = ToolContext(Settings(), workspace, services={"checkpoints": store}, approved=approved)
            times = []
            for _ in range(12):
                start = time.perf_counter()
                result = await run_command.invoke(ctx, run_command.args_model(command="true"))
                assert result.ok, result.text
                times.append(time.perf_counter() - start)
            print(f"{label}: first {times[0] * 1000:.0f} ms, median {statistics.median(times[1:]) * 1000:.0f} ms")
        skipped = [e.get("skipped") for e in store.entries() if e.get("skipped")]
        print("snapshots skipped:", skipped or "none")


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1])))
