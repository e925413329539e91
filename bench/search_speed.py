"""Speed of the ``search`` tool against ``grep -r`` on a 20,000-file tree, in the same run.

Builds a tree in a temporary directory: 20,000 files in nested directories (3 levels), mixed sizes
(mostly under 4 KiB, some up to 256 KiB, a few over the 1 MiB fs_max_size limit), 3% binary files.
Needles are planted in about 1% of the text files. Then, for each pattern, times:

* ours: the tool function called directly (``search.fn``, which runs the walk in a worker thread),
  cold (after evicting the tree from the page cache: ``os.sync`` + ``posix_fadvise(DONTNEED)`` on every
  file of this tree, nothing system-wide) and warm (files cached);
* ``grep -rnI`` (``-F`` for literals, ``-E`` for the regex, ``-i`` when case-insensitive; ``LC_ALL=C``,
  its fastest locale; output captured through a pipe), cold and warm.

Runs of ours and grep alternate, so on a shared machine both see the same load; the ``cpu`` columns
(user + system time of the warm search alone, from ``getrusage``) are the figures least disturbed by
other processes. Every figure is the median of 3 runs. Matching-line counts are printed to show that
both searched the same lines (the files over fs_max_size hold no needle, so the counts agree).

    python bench/search_speed.py [--files 20000] [--keep]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from swebash_ai.config.settings import load_settings
from swebash_ai.safety.paths import PathPolicy
from swebash_ai.tools import search_rg
from swebash_ai.tools.registry import ToolContext, ToolResult
from swebash_ai.tools.search import search

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "request",
    "response",
    "handler",
    "config",
    "value",
    "return",
    "import",
    "class",
    "self",
    "data",
    "error",
    "print",
    "index",
    "buffer",
    "thread",
    "socket",
    "client",
    "server",
    "token",
    "parse",
    "render",
    "update",
    "delete",
    "query",
    "stream",
    "cache",
    "event",
    "loop",
    "model",
    "widget",
    "layout",
]
NEEDLE = "Swebash_Needle_7731"
PATTERNS: list[tuple[str, str, bool, bool]] = [
    # (label, pattern, regex, case_sensitive)
    ("literal, case-sensitive", NEEDLE, False, True),
    ("literal, ignore case", NEEDLE.lower(), False, False),
    ("regex, ignore case", r"def \w+_handler\(", True, False),
    ("common word (many hits)", "socket", False, True),
]


def build_tree(root: Path, n_files: int, seed: int = 7) -> dict[str, int]:
    rng = random.Random(seed)
    lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 14))) + "\n" for _ in range(20_000)]
    corpus = "".join(lines)
    stats = {"files": 0, "binary": 0, "over_limit": 0, "bytes": 0}
    made: set[Path] = set()
    for i in range(n_files):
        d = root / f"pkg{i % 20:02d}" / f"mod{(i // 20) % 10}" / f"sub{(i // 200) % 10}"
        if d not in made:
            d.mkdir(parents=True, exist_ok=True)
            made.add(d)
        r = rng.random()
        if i % 4000 == 17:  # a few files over the 1 MiB limit (no needles in them)
            size = 2 * 1024 * 1024
            stats["over_limit"] += 1
        elif r < 0.75:
            size = rng.randint(100, 4096)
        elif r < 0.98:
            size = rng.randint(4096, 32768)
        else:
            size = rng.randint(32768, 262144)
        path = d / f"file{i}.{'bin' if i % 33 == 5 else 'py' if i % 3 else 'txt'}"
        if size > 1024 * 1024:
            data = b"# filler line without any pattern\n" * (size // 35)
        elif i % 33 == 5:
            data = bytes(rng.getrandbits(8) for _ in range(64)) + b"\x00" * 16 + os.urandom(size)
            stats["binary"] += 1
        else:
            start = rng.randint(0, len(corpus) - 1)
            text = corpus[start : start + size]
            while len(text) < size:
                text += corpus[: size - len(text)]
            if size <= 1024 * 1024 and i % 97 == 3:
                text = f"x = 1\n# {NEEDLE} here\ndef on_{rng.choice(WORDS)}_handler(event):\n" + text
            data = text.encode()
        path.write_bytes(data)
        stats["files"] += 1
        stats["bytes"] += len(data)
    return stats


def evict(root: Path) -> None:
    """Drop this tree's pages from the page cache (after writing them back)."""
    os.sync()
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            fd = os.open(os.path.join(dirpath, name), os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def timed(fn: Callable[[], int]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of this process and its children, result) of one call."""
    r0 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    result = fn()
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = sum(b.ru_utime + b.ru_stime - a.ru_utime - a.ru_stime for a, b in zip(r0, r1, strict=True))
    return wall, cpu, result


def ours(ctx: ToolContext, pattern: str, regex: bool, case_sensitive: bool) -> int:
    async def go() -> ToolResult:
        out = await search.fn(
            ctx,
            pattern=pattern,
            path=".",
            regex=regex,
            case_sensitive=case_sensitive,
            include=None,
            exclude=None,
            context_lines=0,
            max_results=50,
        )
        assert isinstance(out, ToolResult) and out.ok, out
        return out

    return int(asyncio.run(go()).metadata["matches"])


def walk(ctx: ToolContext, pattern: str, regex: bool, case_sensitive: bool) -> int:
    """Ours without ripgrep: the Python walk, the fallback where no rg is installed."""
    saved = search_rg.ripgrep
    search_rg.ripgrep = lambda: None  # type: ignore[assignment]
    try:
        return ours(ctx, pattern, regex, case_sensitive)
    finally:
        search_rg.ripgrep = saved  # type: ignore[assignment]


def rg(root: Path, pattern: str, regex: bool, case_sensitive: bool) -> int:
    """ripgrep itself, printing line numbers like grep -rn, as a user would run it (no ignore files, hidden
    files searched: what the tool searches)."""
    cmd = [search_rg.ripgrep() or "rg", "-n", "--no-ignore", "--hidden", "--no-config", "-g", "!.git",
           "--max-filesize", str(2**20)] + ([] if regex else ["-F"]) + ([] if case_sensitive else ["-i"])
    proc = subprocess.run([*cmd, "--", pattern, "."], cwd=root, capture_output=True, check=False)
    return proc.stdout.count(b"\n")


def grep(root: Path, pattern: str, regex: bool, case_sensitive: bool) -> int:
    cmd = ["grep", "-rnI", "-E" if regex else "-F"] + ([] if case_sensitive else ["-i"]) + ["--", pattern, "."]
    proc = subprocess.run(cmd, cwd=root, capture_output=True, env={**os.environ, "LC_ALL": "C"}, check=False)
    return proc.stdout.count(b"\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="keep the tree (its path is printed)")
    opts = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="swebash-search-bench-"))
    try:
        root, home = base / "tree", base / "home"
        root.mkdir()
        home.mkdir()
        t0 = time.perf_counter()
        stats = build_tree(root, opts.files)
        print(
            f"tree: {stats['files']} files ({stats['binary']} binary, {stats['over_limit']} over 1 MiB), "
            f"{stats['bytes'] / 2**20:.0f} MiB, built in {time.perf_counter() - t0:.1f} s at {root}"
        )
        settings = load_settings(environ={"SWEBASH_AI_HOME": str(base / "swh")}).settings
        ctx = ToolContext(settings=settings, cwd=root, path_policy=PathPolicy(roots=[root], home=home))
        print(
            f"median of {opts.runs} runs, seconds (wall; cpu = user+sys of the search alone); runs of ours and "
            f"grep alternate so both see the same machine load; grep: {shutil.which('grep')}, LC_ALL=C; "
            f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs\n"
        )
        who_runs = ("ours", "walk", "rg", "grep")
        cols = ("ours cold", "ours warm", "walk warm", "rg cold", "rg warm", "grep warm", "ours cpu", "rg cpu")
        header = f"{'pattern':<26}" + "".join(f"{c:>10}" for c in cols) + f"{'ours/rg':>9}  lines ours/walk/rg/grep"
        print(header)
        print("-" * len(header))
        for label, pattern, regex, cs in PATTERNS:
            runs: dict[str, list[float]] = {f"{w} {k}": [] for w in who_runs for k in ("cold", "warm", "cpu")}
            counts = dict.fromkeys(who_runs, 0)
            fns: dict[str, Callable[[], int]] = {
                "ours": lambda p=pattern, r=regex, c=cs: ours(ctx, p, r, c),
                "walk": lambda p=pattern, r=regex, c=cs: walk(ctx, p, r, c),
                "rg": lambda p=pattern, r=regex, c=cs: rg(root, p, r, c),
                "grep": lambda p=pattern, r=regex, c=cs: grep(root, p, r, c),
            }
            for _ in range(opts.runs):
                for who in who_runs:  # alternating, so every competitor sees the same machine load
                    if who in ("ours", "rg"):
                        evict(root)
                        wall, _cpu, _n = timed(fns[who])
                        runs[f"{who} cold"].append(wall)
                    wall, cpu, n = timed(fns[who])
                    runs[f"{who} warm"].append(wall)
                    runs[f"{who} cpu"].append(cpu)
                    counts[who] = n
            cells = "".join(f"{statistics.median(runs[c]):>10.3f}" for c in cols)
            ratio = statistics.median(runs["ours warm"]) / statistics.median(runs["rg warm"])
            print(f"{label:<26}{cells}{ratio:>8.2f}x  {'/'.join(str(counts[w]) for w in who_runs)}", flush=True)
        print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")
    finally:
        if opts.keep:
            print(f"kept {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
