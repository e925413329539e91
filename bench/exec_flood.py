"""Benchmark: command output is read at pipe speed whatever its line length, and memory stays flat.

Part 1, the read rate: a command writes 50 MB (``--mb``) from a file through ``cat``, once as one single line
(a minified bundle, a base64 blob, a JSON answer from ``curl``) and once as short lines, through
:func:`run_process` with the default 100 KB cap and a live ``on_output``, unconfined and in the bubblewrap
sandbox. It prints MB/s read (the file is in the page cache: the pipe and our reading are what is measured)
and exits 1 when one is under ``--floor`` MB/s (default 50).

Part 2, memory: ``yes`` and ``cat /dev/urandom | base64`` for a few seconds each (timeout), printing bytes
seen, kept, live callback count and the growth of this process's RSS (peak minus the level before).

    python bench/exec_flood.py [--mb 50] [--floor 50] [--seconds 3] [--no-memory]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

import psutil

from swebash_ai.sandbox.detect import choose
from swebash_ai.sandbox.policy import SandboxPolicy
from swebash_ai.tools.process import run_process

COMMANDS = ("yes", "cat /dev/urandom | base64")


async def sample_rss(peak: list[int], stop: asyncio.Event) -> None:
    me = psutil.Process()
    while not stop.is_set():
        peak[0] = max(peak[0], me.memory_info().rss)
        await asyncio.sleep(0.05)


async def flood(command: str, seconds: float, cwd: str) -> None:
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


def make_inputs(folder: Path, size: int) -> dict[str, Path]:
    """One file of ``size`` bytes on one line (base64 characters), one of the same bytes in 80-column lines."""
    block = (b"QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NTY3ODkr" * 1024)
    one, lines = folder / "one-line.txt", folder / "short-lines.txt"
    with one.open("wb") as a, lines.open("wb") as b:
        written = 0
        while written < size:
            piece = block[: min(len(block), size - written)]
            a.write(piece)
            b.write(b"\n".join(piece[i : i + 79] for i in range(0, len(piece), 79)))
            written += len(piece)
        a.write(b"\n")
    return {"one line": one, "short lines": lines}


async def read_rate(path: Path, cwd: Path, sandbox: SandboxPolicy | None) -> tuple[float, int]:
    calls = 0

    def sink(_text: str) -> None:
        nonlocal calls
        calls += 1

    start = time.monotonic()
    result = await run_process(f"cat {path}", cwd=cwd, timeout=120, max_output=100_000, on_output=sink,
                               sandbox=sandbox)
    elapsed = time.monotonic() - start
    assert result.exit_code == 0 and not result.timed_out, result.render()
    assert result.stdout_bytes == path.stat().st_size, (result.stdout_bytes, path.stat().st_size)
    return result.stdout_bytes / elapsed / 1e6, calls


async def main(args: argparse.Namespace) -> int:
    slow = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        await flood("true", 1, tmp)  # warm up: imports, the executor thread, psutil caches
        inputs = make_inputs(folder, int(args.mb * 1e6))
        for path in inputs.values():  # into the page cache
            path.read_bytes()
        sandboxes: list[tuple[str, SandboxPolicy | None]] = [("unconfined", None)]
        backend = choose("auto").backend
        if backend:
            sandboxes.append((f"sandboxed ({backend})", SandboxPolicy(writable=(folder.resolve(),))))
        else:
            print("no sandbox backend works here: sandboxed runs skipped")
        for shape, path in inputs.items():
            for label, policy in sandboxes:
                rate, calls = await read_rate(path, folder, policy)
                ok = rate >= args.floor
                slow += [] if ok else [f"{shape}, {label}"]
                print(f"{args.mb:g} MB in {shape}, {label}: {rate:,.0f} MB/s read, {calls} on_output calls"
                      f"{'' if ok else f'  (under {args.floor:g} MB/s)'}")
        if not args.no_memory:
            for command in COMMANDS:
                await flood(command, args.seconds, tmp)
    print(f"load average: {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    return 1 if slow else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=50.0, help="size of each input (default 50)")
    parser.add_argument("--floor", type=float, default=50.0, help="the least MB/s that passes (default 50)")
    parser.add_argument("--seconds", type=float, default=3.0, help="length of each memory run (default 3)")
    parser.add_argument("--no-memory", action="store_true", help="skip the memory runs")
    raise SystemExit(asyncio.run(main(parser.parse_args())))
