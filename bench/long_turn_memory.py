"""Peak memory of a long turn, against the text it holds.

``swebash-ai -c`` against the loopback server scripted to ask for N ``read_file`` calls of a 40 KB file
(one per response, the file changing between reads as a build log does), then answer; and the same command
answered at once, for the start-up footprint. Printed: the peak RSS of each (the child's ``ru_maxrss``), the
text the turn's conversation holds (read from the saved session: the results as the model read them), and
the ratio to keep at 3 or below: (peak - start-up) / text.

    python bench/long_turn_memory.py [--reads 100] [--swebash-ai PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from swebash_ai.testing.fake_server import FakeLLMServer, Reply

SIZE = 40_000


def _responder(reads: int, log: Path) -> object:
    count = {"i": 0}

    def respond(body: dict[str, object]) -> Reply:
        count["i"] += 1
        i = count["i"]
        if i > reads:
            return Reply.text("done", chunk_size=0)
        line = f"{i:06d} compiling module\n"
        log.write_text(line * (SIZE // len(line)))
        return Reply.tool_calls([("read_file", {"path": "build.log"})])

    return respond


def _run(cmd: list[str], env: dict[str, str], cwd: Path) -> int:
    """The child's peak RSS in KiB (``wait4`` on a child started by hand, so its usage is its own)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.chdir(cwd)
        fd = os.open(os.devnull, os.O_RDWR)
        os.dup2(fd, 0)
        out = os.open(str(cwd / ".out"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.execvpe(cmd[0], cmd, env)
    _pid, status, usage = os.wait4(pid, 0)
    text = (cwd / ".out").read_text(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0 or "done" not in text:
        raise SystemExit(f"run failed ({status}):\n{text[-2000:]}")
    return int(usage.ru_maxrss)


def _held(home: Path) -> int:
    """Characters the newest saved session holds in its messages (the results as the model read them)."""
    newest = max(home.rglob("*.jsonl"), key=lambda p: p.stat().st_mtime if "sessions" in p.parts else 0)
    total = 0
    for line in newest.read_text().splitlines()[1:]:
        message = json.loads(line)
        total += len(message.get("content") or "") + len(json.dumps(message.get("tool_calls") or ""))
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reads", type=int, default=100)
    parser.add_argument("--swebash-ai", dest="exe", help="the console script to run (default: python -m)")
    args = parser.parse_args()
    cmd = [args.exe] if args.exe else [sys.executable, "-m", "swebash_ai"]
    with FakeLLMServer("openai") as server, tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ws = root / "ws"
        ws.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SWEBASH_AI_", "OPENAI_"))}
        env.update(HOME=str(root), SWEBASH_AI_HOME=str(root / ".swebash-ai"), SWEBASH_AI_MODEL="openai/fake-model",
                   SWEBASH_AI_API_BASE=server.base_url, SWEBASH_AI_API_KEY="sk-fake", OLLAMA_HOST="http://127.0.0.1:9")
        server.responder = _responder(0, ws / "build.log")  # type: ignore[assignment]
        start = _run([*cmd, "-c", "watch the build"], env, ws)
        server.responder = _responder(args.reads, ws / "build.log")  # type: ignore[assignment]
        peak = _run([*cmd, "-c", "watch the build"], env, ws)
        server.requests.clear()
        held = _held(root / ".swebash-ai") / 1024
    print(f"start-up footprint (no tools)   {start / 1024:7.1f} MiB")
    print(f"peak, {args.reads} reads of 40 KB      {peak / 1024:7.1f} MiB")
    print(f"text the turn holds             {held / 1024:7.1f} MiB")
    print(f"(peak - start-up) / text        {(peak - start) / held:7.2f}   (goal: <= 3)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
