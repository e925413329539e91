"""Tool-loop cost per iteration end to end through the CLI, as a user runs it.

``swebash-ai -c "read"`` against the loopback server scripted to ask for 99 sequential ``read_file`` calls
of a tiny file (one per response) and then answer, minus the same command answered without tools; the
difference over 99 is what one iteration costs (HTTP round trip on loopback, parsing, validation, policy,
the read, events, conversation). The two are run alternately so machine load hits both alike.

    python bench/loop_cli.py [--runs 7] [--swebash-ai PATH]   (PATH e.g. a venv's bin/swebash-ai)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from swebash_ai.testing.fake_server import FakeLLMServer, Reply

CALLS = 99


def _responder(calls: int) -> object:
    count = {"i": 0}

    def respond(body: dict[str, object]) -> Reply:
        count["i"] += 1
        if count["i"] > calls:
            count["i"] = 0
            return Reply.text("done", chunk_size=0)
        return Reply.tool_calls([("read_file", {"path": "tiny.txt"})])

    return respond


def _run(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    res = subprocess.run(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                         timeout=300)
    elapsed = time.perf_counter() - start
    if res.returncode != 0 or res.stdout.strip() != "done":
        raise SystemExit(f"run failed ({res.returncode}): {res.stdout!r}\n{res.stderr}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--swebash-ai", dest="exe", help="the console script to run (default: python -m)")
    args = parser.parse_args()
    cmd = [args.exe] if args.exe else [sys.executable, "-m", "swebash_ai"]
    with FakeLLMServer("openai") as server, tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "ws").mkdir()
        (root / "ws" / "tiny.txt").write_text("hello\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SWEBASH_AI_", "OPENAI_"))}
        env.update(HOME=str(root), SWEBASH_AI_HOME=str(root / ".swebash-ai"), SWEBASH_AI_MODEL="openai/fake-model",
                   SWEBASH_AI_API_BASE=server.base_url, SWEBASH_AI_API_KEY="sk-fake",
                   SWEBASH_AI_TOOLS_MAX_ITER="100", SWEBASH_AI_MAX_TOOL_CALLS_PER_TURN="200",
                   OLLAMA_HOST="http://127.0.0.1:9")
        tools: list[float] = []
        plain: list[float] = []
        for i in range(args.runs + 1):  # the first pair warms caches and is not counted
            server.responder = _responder(CALLS)  # type: ignore[assignment]
            t = _run([*cmd, "-c", "read tiny.txt"], env, root / "ws")
            server.responder = _responder(0)  # type: ignore[assignment]
            p = _run([*cmd, "-c", "read tiny.txt"], env, root / "ws")
            if i:
                tools.append(t)
                plain.append(p)
    per = (statistics.median(tools) - statistics.median(plain)) / CALLS
    print(f"{CALLS} tool iterations  median {statistics.median(tools) * 1000:7.0f} ms")
    print(f"no-tool answer     median {statistics.median(plain) * 1000:7.0f} ms")
    print(f"per iteration      {per * 1000:7.2f} ms   (runs={args.runs})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
