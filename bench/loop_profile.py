"""Where one iteration of the tool loop spends its time: cProfile over a turn of N no-op tool calls against the
loopback server (the same turn as bench/loop_overhead.py), the functions of the package first.

    python bench/loop_profile.py [N] [--all]   (--all: every function, not only swebash_ai's)
"""

from __future__ import annotations

import asyncio
import cProfile
import io
import os
import pstats
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from loop_overhead import http_run, loop_run

from swebash_ai.testing.fake_server import FakeLLMServer


async def main(n: int, everything: bool) -> None:
    os.environ.setdefault("SWEBASH_AI_HOME", tempfile.mkdtemp())
    with FakeLLMServer("openai") as server:
        await http_run(server, 5)  # warm up: imports, connection pool
        await loop_run(server, 5)
        profile = cProfile.Profile()
        profile.enable()
        await loop_run(server, n)
        profile.disable()
    out = io.StringIO()
    stats = pstats.Stats(profile, stream=out).sort_stats("cumulative")
    if everything:
        stats.print_stats(60)
    else:
        stats.print_stats("swebash_ai", 60)
    print(out.getvalue())


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    asyncio.run(main(int(args[0]) if args else 100, "--all" in sys.argv))
