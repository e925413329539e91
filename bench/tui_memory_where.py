"""Where the memory of a long TUI session goes: the companion of ``tui_session_memory.py``, for diagnosis.

The same session (headless, 120x40, the loopback server, each turn a question, one ``read_file`` of a 4 KB
file and a ~1 KB Markdown answer). Between the warm-up and the end it compares: the objects the collector
tracks, by type; what Python allocated and still holds, by line (``tracemalloc``, one frame: several frames
make the run ten times slower); and the resident memory against the allocators' own figures (glibc's
``mallinfo2``: in use and free in its heap). What the resident memory grew by beyond the live allocations is
memory the allocators keep (pymalloc arenas pinned by one live object, glibc's heap), not objects to free.

    python bench/tui_memory_where.py [--turns 120] [--warmup 20] [--top 30] [--no-trace]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import ctypes
import gc
import sys
import tempfile
import tracemalloc
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).parent))
import tui_session_memory as bench


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]


def malloc_figures() -> tuple[int, int] | None:
    """glibc's heap: (bytes in use, bytes free but kept), or ``None`` off glibc."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = _MallInfo2
    except (OSError, AttributeError):
        return None
    info = libc.mallinfo2()
    return info.uordblks + info.hblkhd, info.fordblks


def type_counts() -> collections.Counter[str]:
    return collections.Counter(f"{type(o).__module__}.{type(o).__qualname__}" for o in gc.get_objects())


async def run(turns: int, warmup: int, workspace: Path, top: int, trace: bool) -> None:
    from swebash_ai.config.settings import load_settings
    from swebash_ai.frontends.tui.app import SwebashApp

    me = psutil.Process()
    app = SwebashApp(load_settings(), cwd=workspace, probe_ollama=False, setup_on_start=False)
    figures: list[tuple[int, Any, collections.Counter[str], Any, int]] = []

    def measure() -> None:
        bench.settle(app)
        gc.unfreeze()
        gc.collect()
        snapshot = tracemalloc.take_snapshot() if trace else None
        figures.append((me.memory_info().rss, malloc_figures(), type_counts(), snapshot,
                        bench._held(app.session.conversation)))
        gc.freeze()

    async with app.run_test(size=(120, 40)) as pilot:
        while not app.session_ready.is_set():
            await pilot.pause(0.05)
        for i in range(turns):
            if i == warmup:
                measure()
            await bench._turn(app, pilot, f"question {i}: what do the notes say?")
            bench.reading(app, i + 1)
        measure()
    (rss0, heap0, counts0, snap0, held0), (rss1, heap1, counts1, snap1, held1) = figures
    mib = 1024 * 1024
    print(f"resident: {rss0 / mib:.1f} -> {rss1 / mib:.1f} MiB (+{(rss1 - rss0) / mib:.1f}); "
          f"text held +{(held1 - held0) / mib:.2f} MiB")
    if heap0 and heap1:
        print(f"glibc heap in use: +{(heap1[0] - heap0[0]) / mib:.1f} MiB; free but kept: "
              f"{heap0[1] / mib:.1f} -> {heap1[1] / mib:.1f} MiB")
    print("objects tracked by the collector, growth by type:")
    for name, grew in sorted(((k, v - counts0.get(k, 0)) for k, v in counts1.items()), key=lambda kv: -kv[1])[:top]:
        print(f"  {grew:8,d}  {name}")
    if snap0 is not None and snap1 is not None:
        skip = [tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, __file__)]
        diff = snap1.filter_traces(skip).compare_to(snap0.filter_traces(skip), "lineno")
        print(f"live allocations: +{sum(d.size_diff for d in diff) / mib:.2f} MiB; by line:")
        for d in diff[:top]:
            print(f"  {d.size_diff / 1024:9.1f} KiB {d.count_diff:+7,d}  {d.traceback[0]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=120)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--no-trace", action="store_true", help="no tracemalloc (the run is several times faster)")
    parser.add_argument("--in-process-server", action="store_true",
                        help="run the loopback server on a thread of this process (its memory then counts)")
    parser.add_argument("--context-tokens", type=int, default=None, help="the request budget (the app's default)")
    args = parser.parse_args()
    if not args.no_trace:
        tracemalloc.start(1)
    with bench.llm_server(args.turns, args.in_process_server) as server, tempfile.TemporaryDirectory() as tmp:
        workspace = bench.prepare(server, Path(tmp), args.context_tokens)
        asyncio.run(run(args.turns, args.warmup, workspace, args.top, trace=not args.no_trace))


if __name__ == "__main__":
    main()
