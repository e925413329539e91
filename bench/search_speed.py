"""Speed of the ``search`` tool against ``grep -r`` on a 20,000-file tree, in the same run.

Builds a tree in a temporary directory: 20,000 files in nested directories (3 levels), mixed sizes
(mostly under 4 KiB, some up to 256 KiB, a few over the 1 MiB fs_max_size limit), 3% binary files.
Needles are planted in about 1% of the text files. Then, for each pattern, times:

* ours, cold: the tool function called directly after evicting the tree from the page cache
  (``os.sync`` + ``posix_fadvise(DONTNEED)`` on every file: only this tree, nothing system-wide);
* ours, warm: the same call with the files cached;
* ``grep -rnI`` (``-F`` for literals, ``-E`` for the regex, ``-i`` when case-insensitive; ``LC_ALL=C``,
  its fastest locale) cold and warm, output captured through a pipe.

Every figure is the median of 3 runs. Match counts are printed to show both searched the same lines
(files over fs_max_size hold no needle, so the counts agree).

    python bench/search_speed.py [--files 20000] [--keep]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from swebash_ai.config import load_settings
from swebash_ai.safety.paths import PathPolicy
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


def median_time(fn: Callable[[], int], runs: int, before: Callable[[], None] | None = None) -> tuple[float, int]:
    times, count = [], 0
    for _ in range(runs):
        if before:
            before()
        t0 = time.perf_counter()
        count = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), count


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
        print(f"median of {opts.runs} runs, seconds; grep: {shutil.which('grep')} with LC_ALL=C\n")
        header = (
            f"{'pattern':<26} {'ours cold':>9} {'ours warm':>9} {'grep cold':>9} {'grep warm':>9}  matches ours/grep"
        )
        print(header)
        print("-" * len(header))
        for label, pattern, regex, cs in PATTERNS:
            oc, n_ours = median_time(
                lambda p=pattern, r=regex, c=cs: ours(ctx, p, r, c), opts.runs, lambda: evict(root)
            )
            ow, _ = median_time(lambda p=pattern, r=regex, c=cs: ours(ctx, p, r, c), opts.runs)
            gc, n_grep = median_time(
                lambda p=pattern, r=regex, c=cs: grep(root, p, r, c), opts.runs, lambda: evict(root)
            )
            gw, _ = median_time(lambda p=pattern, r=regex, c=cs: grep(root, p, r, c), opts.runs)
            print(f"{label:<26} {oc:>9.3f} {ow:>9.3f} {gc:>9.3f} {gw:>9.3f}  {n_ours}/{n_grep}")
    finally:
        if opts.keep:
            print(f"kept {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
