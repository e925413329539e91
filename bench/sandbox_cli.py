"""Benchmark: what the sandbox adds to a command as a user meets it, end to end through the CLI.

``swebash-ai --yes -c go`` against the scripted loopback server, whose model runs one command through
``run_command`` and then answers: with ``--yes`` the command runs in the sandbox (the default,
``exec_sandbox = auto``); with ``SWEBASH_AI_EXEC_SANDBOX=none`` it does not. Pairs alternate which goes first and
the ratio is taken pair by pair. Two commands: ``true``, and a build-like job (1,000 small files written, then
read back). Measure as a user installs: ``--python`` the interpreter of a fresh ``pip install .`` venv.

    python bench/sandbox_cli.py [--python /tmp/venv/bin/python] [--runs 15]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from swebash_ai.testing.fake_server import FakeLLMServer
from swebash_ai.testing.replies import Reply

BUILD = "mkdir -p out && for i in $(seq 1000); do echo \"file $i\" > out/f$i.txt; done && cat out/*.txt > /dev/null " \
        "&& rm -r out"


def _once(python: str, ws: Path, home: Path, server: FakeLLMServer, command: str, sandboxed: bool) -> float:
    server.enqueue(Reply.tool_calls([("run_command", {"command": command})]), Reply.text("ok"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("SWEBASH_AI_")}
    env.update(HOME=str(home), SWEBASH_AI_HOME=str(home / ".swebash-ai"), SWEBASH_AI_MODEL="openai/fake-model",
               SWEBASH_AI_API_BASE=server.base_url, SWEBASH_AI_API_KEY="sk-bench", SWEBASH_AI_AUDIT="false")
    if not sandboxed:
        env["SWEBASH_AI_EXEC_SANDBOX"] = "none"
    start = time.perf_counter()
    out = subprocess.run([python, "-m", "swebash_ai", "--yes", "-c", "go"], cwd=ws, env=env, capture_output=True,
                         text=True, stdin=subprocess.DEVNULL, timeout=120)
    took = time.perf_counter() - start
    if out.returncode != 0 or "ok" not in out.stdout:
        raise SystemExit(f"run failed ({out.returncode}): {out.stderr[-500:]}")
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="the interpreter swebash-ai is installed in")
    parser.add_argument("--runs", type=int, default=15, help="pairs per command")
    args = parser.parse_args()
    base = "/var/tmp" if os.access("/var/tmp", os.W_OK) else None
    top = Path(tempfile.mkdtemp(prefix="bench-sandbox-cli-", dir=base))
    ws, home = top / "ws", top / "home"
    ws.mkdir()
    home.mkdir()
    try:
        with FakeLLMServer("openai") as server:
            _once(args.python, ws, home, server, "true", True)  # warm the caches both ways
            _once(args.python, ws, home, server, "true", False)
            for name, command, target in (("true", "true", 1.25), ("1,000 files", BUILD, 1.1)):
                plain, boxed, ratios = [], [], []
                for i in range(args.runs):
                    order = (True, False) if i % 2 else (False, True)
                    got = {s: _once(args.python, ws, home, server, command, s) for s in order}
                    boxed.append(got[True])
                    plain.append(got[False])
                    ratios.append(got[True] / got[False])
                print(f"{name:12} unconfined {statistics.median(plain) * 1000:7.1f} ms   sandboxed "
                      f"{statistics.median(boxed) * 1000:7.1f} ms   ratio {statistics.median(ratios):.2f}x "
                      f"(target <= {target}x; {args.runs} pairs)")
    finally:
        shutil.rmtree(top, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
