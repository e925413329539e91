"""Time to the first piece of an answer in an editor (``swebash-ai acp``) against the terminal (``-c``).

Both ask the same loopback fake OpenAI-compatible server (real HTTP + SSE), which answers at once:

* ``acp``: a fresh agent process is initialised and given a session; then the clock runs from writing the
  ``session/prompt`` line to reading the first ``agent_message_chunk`` notification (the first turn of the
  process, lazy imports included). The second prompt of the same session is shown too.
* ``-c``: from starting ``swebash-ai -c hi`` to the first byte of its answer on stdout (process start-up
  included: what a person at a terminal waits for); and that less the start-up of ``--version``, which leaves
  roughly the work of the turn itself, the part an editor's already running agent still does.

The goal: the editor's first chunk comes at most 20 ms after the terminal's first byte (medians).

    PYTHONPATH=$PWD python bench/acp_first_chunk.py [--runs 10]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from swebash_ai.testing.fake_server import FakeLLMServer, Reply

ANSWER = "Hello! How can I help?"
GOAL_MS = 20.0


def _read_message(stream: Any) -> dict[str, Any]:
    line = stream.readline()
    if not line:
        raise SystemExit("swebash-ai acp closed stdout")
    message: dict[str, Any] = json.loads(line)
    return message


def _call(proc: subprocess.Popen[bytes], request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()
                     + b"\n")
    proc.stdin.flush()
    while True:
        message = _read_message(proc.stdout)
        if message.get("id") == request_id and "method" not in message:
            if "error" in message:
                raise SystemExit(f"{method} failed: {message['error']}")
            return message


def _first_chunk(proc: subprocess.Popen[bytes], request_id: int, session_id: str) -> float:
    """Seconds from writing the prompt to reading its first agent_message_chunk (then reads to the response)."""
    assert proc.stdin is not None and proc.stdout is not None
    line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "session/prompt",
                       "params": {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}}).encode()
    start = time.perf_counter()
    proc.stdin.write(line + b"\n")
    proc.stdin.flush()
    first: float | None = None
    while True:
        message = _read_message(proc.stdout)
        update = message.get("params", {}).get("update", {})
        if first is None and update.get("sessionUpdate") == "agent_message_chunk":
            first = time.perf_counter() - start
        if message.get("id") == request_id and "method" not in message:
            assert first is not None, message
            return first


def _acp_run(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    proc = subprocess.Popen([*cmd, "acp"], env=env, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    try:
        _call(proc, 1, "initialize", {"protocolVersion": 1})
        session = _call(proc, 2, "session/new", {"cwd": str(cwd), "mcpServers": []})["result"]["sessionId"]
        first = _first_chunk(proc, 3, session)
        warm = _first_chunk(proc, 4, session)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=60)
    return first, warm


def _oneshot_run(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.Popen([*cmd, "-c", "hi"], env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    byte = os.read(proc.stdout.fileno(), 1)
    elapsed = time.perf_counter() - start
    rest = proc.stdout.read()
    proc.wait(timeout=60)
    if (byte + rest).decode().strip() != ANSWER:
        raise SystemExit(f"-c answered {(byte + rest)!r}")
    return elapsed


def _fmt(times: list[float]) -> str:
    return (f"median {statistics.median(times) * 1000:7.1f} ms   min {min(times) * 1000:7.1f} ms   "
            f"max {max(times) * 1000:7.1f} ms   (n={len(times)})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    cmd = [sys.executable, "-m", "swebash_ai"]
    with FakeLLMServer("openai") as server, tempfile.TemporaryDirectory() as tmp:
        server.responder = lambda body: Reply.text(ANSWER, chunk_size=0)
        root = Path(tmp)
        home, cwd = root / "home", root / "ws"
        for folder in (home, cwd):
            folder.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SWEBASH_AI_", "OPENAI_"))}
        env.update(HOME=str(home), SWEBASH_AI_HOME=str(home / ".swebash-ai"), SWEBASH_AI_MODEL="openai/fake-model",
                   SWEBASH_AI_API_BASE=server.base_url, SWEBASH_AI_API_KEY="sk-fake",
                   OLLAMA_HOST="http://127.0.0.1:9")
        _oneshot_run(cmd, env, cwd)  # warm-up: bytecode and page caches, not counted
        _acp_run(cmd, env, cwd)
        oneshot: list[float] = []
        first: list[float] = []
        warm: list[float] = []
        start_up: list[float] = []
        for _ in range(args.runs):  # alternated, so that machine load hits both alike
            oneshot.append(_oneshot_run(cmd, env, cwd))
            began = time.perf_counter()
            subprocess.run([*cmd, "--version"], env=env, cwd=cwd, capture_output=True, check=True)
            start_up.append(time.perf_counter() - began)
            a, b = _acp_run(cmd, env, cwd)
            first.append(a)
            warm.append(b)
    print(f"-c hi: start to first byte of the answer            {_fmt(oneshot)}")
    print(f"-c hi less `--version` (start-up) medians:           "
          f"{(statistics.median(oneshot) - statistics.median(start_up)) * 1000:7.1f} ms")
    print(f"acp: session/prompt to first agent_message_chunk    {_fmt(first)}")
    print(f"acp: the same, second prompt of the session         {_fmt(warm)}")
    more = (statistics.median(first) - statistics.median(oneshot)) * 1000
    verdict = "within" if more <= GOAL_MS else "OVER"
    print(f"acp first chunk - -c first byte (medians): {more:+.1f} ms ({verdict} the {GOAL_MS:.0f} ms goal)")
    return 0 if more <= GOAL_MS else 1


if __name__ == "__main__":
    sys.exit(main())
