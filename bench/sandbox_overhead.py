"""Benchmark: what the sandbox adds to a command run through :func:`run_process` (targets: <= 1.25x, <= 1.1x).

Two workloads, each run in pairs, confined and not, in alternating order (the ratio is taken pair by pair, so a
machine that drifts during the run does not move it):

* ``true`` end to end: the policy built for the call (as the exec tool does: a walk of the workspace for
  protected names), the backend's argv, the supervisor, the command, the stop;
* a build-like job: 1,000 small files written, then read back (``cat``), in the workspace.

The workspace is a throw-away folder under /var/tmp (outside the sandbox's private /tmp), or ``--workspace``;
the policy's walk over this checkout is timed on its own too. GAP seconds pass between runs (as between a model's
tool calls: the next supervisor is started ahead). Prints medians and the median of the pair ratios.

    PYTHONPATH=$PWD python bench/sandbox_overhead.py [--runs 30] [--gap 0.2] [--backend bwrap]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from swebash_ai.safety.paths import PathPolicy
from swebash_ai.sandbox.detect import choose
from swebash_ai.sandbox.policy import build_policy
from swebash_ai.tools.process import run_process

ROOT = Path(__file__).resolve().parents[1]
BUILD = "mkdir -p out && for i in $(seq 1000); do echo \"file $i\" > out/f$i.txt; done && cat out/*.txt > /dev/null " \
        "&& rm -r out"


async def _once(command: str, ws: Path, sandboxed: bool, backend: str) -> float:
    start = time.perf_counter()
    policy = build_policy(PathPolicy(roots=[ws])) if sandboxed else None
    res = await run_process(command, cwd=ws, timeout=60, sandbox=policy, sandbox_backend=backend)
    took = time.perf_counter() - start
    assert res.exit_code == 0, res.render()
    return took


async def _pairs(command: str, ws: Path, runs: int, gap: float, backend: str) -> tuple[list[float], list[float]]:
    plain: list[float] = []
    boxed: list[float] = []
    for n in range(runs + 1):  # the first pair warms up and is not counted
        order = (False, True) if n % 2 else (True, False)
        got = {}
        for sandboxed in order:
            got[sandboxed] = await _once(command, ws, sandboxed, backend)
            await asyncio.sleep(gap)
        if n:
            plain.append(got[False])
            boxed.append(got[True])
    return plain, boxed


def _report(name: str, plain: list[float], boxed: list[float], target: float) -> None:
    ratio = statistics.median(b / p for p, b in zip(plain, boxed, strict=True))
    mark = "ok" if ratio <= target else "over"
    print(f"{name}: unconfined median {statistics.median(plain) * 1000:.1f} ms, sandboxed median "
          f"{statistics.median(boxed) * 1000:.1f} ms, ratio (median of pairs) {ratio:.2f}x "
          f"(target <= {target:g}x: {mark})")


async def main(args: argparse.Namespace) -> int:
    choice = choose(args.backend)
    if not choice.ok:
        print(f"no sandbox here: {choice.problem}")
        return 1
    base = "/var/tmp" if os.access("/var/tmp", os.W_OK) else None
    ws = Path(args.workspace) if args.workspace else Path(tempfile.mkdtemp(prefix="sbx-bench-", dir=base))
    try:
        print(f"backend: {choice.backend} ({choice.binary}); runs: {args.runs} pairs; gap: {args.gap:g} s; "
              f"workspace: {ws}")
        walk = []
        for _ in range(5):
            start = time.perf_counter()
            policy = build_policy(PathPolicy(roots=[ROOT]))
            walk.append(time.perf_counter() - start)
        print(f"policy for this checkout ({len(policy.hidden)} hidden, {len(policy.read_only)} read-only): "
              f"median {statistics.median(walk) * 1000:.1f} ms")
        _report("`true` end to end", *await _pairs("true", ws, args.runs, args.gap, args.backend), 1.25)
        _report("1,000 files written and read", *await _pairs(BUILD, ws, max(args.runs // 3, 5), args.gap,
                                                              args.backend), 1.1)
    finally:
        if not args.workspace:
            shutil.rmtree(ws, ignore_errors=True)
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="pairs of the `true` workload (a third for the build)")
    parser.add_argument("--gap", type=float, default=0.2, help="seconds between runs")
    parser.add_argument("--backend", default="bwrap", help="auto, bwrap, landlock")
    parser.add_argument("--workspace", help="run in this folder instead of a throw-away one")
    raise SystemExit(asyncio.run(main(parser.parse_args())))
