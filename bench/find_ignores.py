"""Speed of ``find_files`` on a tree with a ``.gitignore`` in every directory (the worst case for reading them).

Builds ``--dirs`` directories (two levels) of ``--files`` files in total, each directory with a small
``.gitignore``, under a ``.git`` top; then times the tool function (``find_files.fn``) listing ``**/*.py``,
warm, median of ``--runs``. ``--tree PATH`` times an existing tree instead (a large checkout). Each
``.gitignore`` goes through ``safety.unasked.read_unasked``; run this from two checkouts to compare.

    PYTHONPATH=$PWD python bench/find_ignores.py [--dirs 2000] [--files 20000] [--tree PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from swebash_ai.config.settings import load_settings
from swebash_ai.safety.paths import PathPolicy
from swebash_ai.tools.find import find_files
from swebash_ai.tools.registry import ToolContext


def build_tree(root: Path, dirs: int, files: int) -> None:
    (root / ".git").mkdir()
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    per_dir = max(1, files // dirs)
    for d in range(dirs):
        folder = root / f"pkg{d % 50}" / f"mod{d}"
        folder.mkdir(parents=True)
        (folder / ".gitignore").write_text(f"generated_{d}_*.py\n*.tmp\n!keep.tmp\n")
        for f in range(per_dir):
            (folder / (f"file{f}.py" if f % 5 else f"generated_{d}_{f}.py")).write_text("")


def time_find(root: Path, runs: int) -> tuple[float, float, str]:
    home = Path(tempfile.mkdtemp())
    ctx = ToolContext(settings=load_settings({}), cwd=root, path_policy=PathPolicy(roots=[root], home=home))
    walls, cpus = [], []
    first = ""
    for _ in range(runs):
        started, cpu = time.perf_counter(), time.process_time()
        result = asyncio.run(find_files.fn(ctx, pattern="**/*.py", max_results=50))
        walls.append(time.perf_counter() - started)
        cpus.append(time.process_time() - cpu)  # all threads of this process: less disturbed by other load
        first = first or result.text.splitlines()[0]
    return statistics.median(walls), statistics.median(cpus), first


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dirs", type=int, default=2000)
    parser.add_argument("--files", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tree", type=Path)
    opts = parser.parse_args()
    if opts.tree:
        root = opts.tree.resolve()
    else:
        root = Path(tempfile.mkdtemp()) / "tree"
        root.mkdir()
        build_tree(root, opts.dirs, opts.files)
    ignores = sum(1 for _d, _s, names in os.walk(root) if ".gitignore" in names)
    wall, cpu, first = time_find(root, opts.runs)
    print(f"{root}: {ignores} .gitignore files; find_files **/*.py, median of {opts.runs}: {wall * 1000:.0f} ms "
          f"wall, {cpu * 1000:.0f} ms cpu ({first})")


if __name__ == "__main__":
    main()
