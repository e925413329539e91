"""Benchmark: what language-server diagnostics add to an edit (target: <= 300 ms, median, warm server).

``edit_file`` runs in pairs on a ~200-line Python module, with diagnostics on (ty, as a session starts it: in the
sandbox where one works) and off, in alternating order; the time added is taken pair by pair, so a machine that
drifts during the run does not move it. The first edit with diagnostics on (the server's start: its process, the
sandbox, ``initialize``, the first check of the project) is reported on its own. Then 100 more edits with the
server running, and the memory of the server's process tree and of this process after 10 and after 100 edits:
what a long session keeps.

The workspace is a throw-away folder under /var/tmp (outside the sandbox's private /tmp).

    PYTHONPATH=$PWD python bench/lsp_edit.py [--pairs 30] [--edits 100] [--gap 0.2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

from swebash_ai.config.settings import load_settings
from swebash_ai.safety.paths import PathPolicy
from swebash_ai.tools.fs_write import edit_file
from swebash_ai.tools.registry import ToolContext

_FUNCS = 40


def _module() -> str:
    parts = ["from __future__ import annotations\n\n"]
    for i in range(_FUNCS):
        parts.append(f"def f{i}(x: int) -> int:\n    y = x + {i}\n    return y * 2\n\n\n")
    parts.append("VALUE = 0\n")
    return "".join(parts)


def _ctx(workspace: Path, mode: str) -> ToolContext:
    os.environ["SWEBASH_AI_LSP_DIAGNOSTICS"] = mode
    return ToolContext(settings=load_settings().settings, cwd=workspace,
                       path_policy=PathPolicy(roots=[workspace]), services={})


async def _edit(ctx: ToolContext, name: str, n: int) -> tuple[float, Any]:
    args = edit_file.args_model(path=name, old=f"VALUE = {n}\n", new=f"VALUE = {n + 1}\n")
    start = time.perf_counter()
    result = await edit_file.invoke(ctx, args)
    took = time.perf_counter() - start
    if not result.ok:
        raise SystemExit(f"the edit failed: {result.text}")
    return took, result.metadata.get("diagnostics")


def _tree_rss(svc: Any) -> float:
    total = 0
    for pid in svc.pids():
        try:
            proc = psutil.Process(pid)
            total += sum(p.memory_info().rss for p in [proc, *proc.children(recursive=True)])
        except psutil.NoSuchProcess:
            continue
    return total / 2**20


async def main(pairs: int, edits: int, gap: float) -> None:
    if shutil.which("ty") is None:
        raise SystemExit("ty is not on PATH: pip install 'swebash-ai[lsp]'")
    root = Path(tempfile.mkdtemp(prefix="lsp-bench-", dir="/var/tmp"))
    try:
        (root / "pyproject.toml").write_text('[project]\nname = "bench"\nversion = "0"\n')
        for name in ("on.py", "off.py"):
            (root / name).write_text(_module())
        on, off = _ctx(root, "edit"), _ctx(root, "off")
        counters = {"on.py": 0, "off.py": 0}

        async def edit(ctx: ToolContext, name: str) -> tuple[float, Any]:
            took, diag = await _edit(ctx, name, counters[name])
            counters[name] += 1
            return took, diag

        base, _ = await edit(off, "off.py")
        cold, diag = await edit(on, "on.py")
        svc = on.services["lsp"]
        print(f"server: {diag and diag.get('server')} ({svc.where}); python {sys.version.split()[0]}")
        print(f"cold (first edit, server start): {cold * 1000:.0f} ms (an edit without: {base * 1000:.0f} ms); "
              f"status {diag and diag.get('status')}")
        added: list[float] = []
        with_lsp: list[float] = []
        without: list[float] = []
        for i in range(pairs):
            await asyncio.sleep(gap)
            order = [(on, "on.py"), (off, "off.py")] if i % 2 == 0 else [(off, "off.py"), (on, "on.py")]
            got = {}
            for ctx, name in order:
                got[name], diag = await edit(ctx, name)
                if name == "on.py" and (diag or {}).get("status") != "ok":
                    print(f"  pair {i}: {diag}")
            with_lsp.append(got["on.py"])
            without.append(got["off.py"])
            added.append(got["on.py"] - got["off.py"])
        print(f"warm, {pairs} pairs: edit with diagnostics median {statistics.median(with_lsp) * 1000:.0f} ms, "
              f"without {statistics.median(without) * 1000:.0f} ms; added median "
              f"{statistics.median(added) * 1000:.0f} ms, max {max(added) * 1000:.0f} ms "
              f"(settle {on.settings.lsp_settle * 1000:.0f} ms of it)")
        me = psutil.Process()
        rss: dict[int, tuple[float, float]] = {}
        for n in range(1, edits + 1):
            await edit(on, "on.py")
            if n in (10, edits):
                rss[n] = (_tree_rss(svc), me.memory_info().rss / 2**20)
        for n, (server, ours) in rss.items():
            print(f"after {n} more edits: server tree {server:.1f} MiB, this process {ours:.1f} MiB")
        print(f"documents kept: {sum(len(c.client.versions) for c in svc._running.values())}, "
              f"publications kept: {sum(len(c.client.published) for c in svc._running.values())}")
        await svc.aclose()
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=30)
    parser.add_argument("--edits", type=int, default=100)
    parser.add_argument("--gap", type=float, default=0.2)
    a = parser.parse_args()
    asyncio.run(main(a.pairs, a.edits, a.gap))
