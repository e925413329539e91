"""Benchmark: what the sandbox adds to a command as a user meets it, end to end through the CLI.

``swebash-ai --yes -c go`` against the scripted loopback server, whose model runs one command through
``run_command`` and then answers: with ``--yes`` the command runs in the sandbox (the default,
``exec_sandbox = auto``); with ``SWEBASH_AI_EXEC_SANDBOX=none`` it does not. Pairs alternate which goes first and
the ratio is taken pair by pair. Two commands: ``exit 0`` for ``true`` (target <= 1.1x: ``true`` itself is proven
read-only, so it never runs in the sandbox and measures nothing of it), and a build-like job (1,000 small files
written, then read back; target <= 1.05x). Measure as a user installs: ``--python`` the interpreter of a fresh
``pip install .`` (not editable) venv.

    python bench/sandbox_cli.py [--python /tmp/venv/bin/python] [--runs 15]

``--walk N``: what a command pays for the view's walk of a workspace of N files (20,000 by default: nested
folders, a git repository, a few protected names): the policy (the walk for protected names and nested
repositories) and the check before and after a run (``sandbox/planted.py``), the first time in a process (what
each ``-c`` pays) and for later commands (what a session pays: a folder unchanged since is a stat).
``--make-workspace N DIR`` writes that workspace for a timing tool of one's own.

``--serve COMMAND``: a scripted server that runs ``COMMAND`` through ``run_command`` on every prompt, then
answers "ok" (for any number of runs), its base URL on the first line, until SIGTERM: for timing the two CLI
runs side by side with a tool of one's own (``/usr/bin/time``, hyperfine), as a user runs them.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from swebash_ai.testing.fake_server import FakeLLMServer
from swebash_ai.testing.replies import Reply

BUILD = "mkdir -p out && for i in $(seq 1000); do echo \"file $i\" > out/f$i.txt; done && cat out/*.txt > /dev/null " \
        "&& rm -r out"

TRIVIAL = "exit 0"
"""A command that does nothing and is not proven read-only (``true`` is: it would run unconfined both ways)."""


def make_workspace(ws: Path, files: int) -> None:
    """``files`` small files in nested folders (100 a folder, 20 folders a level), a git repository, a few
    protected names (``.env``, ``deploy/.aws/credentials``) for the walk to find."""
    ws.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    for i in range(files):
        folder = ws / "src" / f"a{i // 2000}" / f"b{(i // 100) % 20}"
        if i % 100 == 0:
            folder.mkdir(parents=True, exist_ok=True)
        (folder / f"m{i}.py").write_text(f"x = {i}\n")
    (ws / ".env").write_text("K=1\n")
    (ws / "deploy" / ".aws").mkdir(parents=True)
    (ws / "deploy" / ".aws" / "credentials").write_text("[default]\n")
    old = time.time() - 60  # as a workspace one works in: no folder changed in the last seconds (those are re-read)
    for folder, _dirs, _files in os.walk(ws):
        os.utime(folder, (old, old))


def walk_cost(ws: Path, later: int = 10) -> tuple[float, float, tuple[str, ...]]:
    """(first, median of ``later``) seconds of one command's view work: its policy, the check before and after;
    and the policy's notes (a walk cut at ``WALK_LIMIT`` says so)."""
    from swebash_ai.safety.paths import PathPolicy
    from swebash_ai.sandbox import planted
    from swebash_ai.sandbox.policy import build_policy

    paths = PathPolicy(roots=[ws])

    def once() -> float:
        start = time.perf_counter()
        policy = build_policy(paths)
        watch = planted.before(policy, paths)
        planted.after(watch, policy, paths)
        return time.perf_counter() - start

    first = once()
    return first, statistics.median(once() for _ in range(later)), build_policy(paths).notes


def serve(command: str) -> int:
    """The scripted server of ``--serve`` (see the module docstring)."""
    import signal

    def responder(body: dict[str, object]) -> Reply:
        messages = body.get("messages")
        last = messages[-1] if isinstance(messages, list) and messages else {}
        if isinstance(last, dict) and last.get("role") == "tool":
            return Reply.text("ok")
        return Reply.tool_calls([("run_command", {"command": command})])

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with FakeLLMServer("openai") as server:
        server.responder = responder
        print(server.base_url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            stop.wait()
    return 0


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
    parser.add_argument("--walk", type=int, metavar="FILES", help="time the view's walk of a workspace this big")
    parser.add_argument("--make-workspace", nargs=2, metavar=("FILES", "DIR"), help="write that workspace, exit")
    parser.add_argument("--serve", metavar="COMMAND", help="serve a script that runs COMMAND, until SIGTERM")
    args = parser.parse_args()
    if args.serve:
        return serve(args.serve)
    if args.make_workspace:
        make_workspace(Path(args.make_workspace[1]), int(args.make_workspace[0]))
        return 0
    base = "/var/tmp" if os.access("/var/tmp", os.W_OK) else None
    top = Path(tempfile.mkdtemp(prefix="bench-sandbox-cli-", dir=base))
    ws, home = top / "ws", top / "home"
    ws.mkdir()
    home.mkdir()
    try:
        if args.walk:
            make_workspace(ws / "big", args.walk)
            first, later, notes = walk_cost(ws / "big")
            print(f"{args.walk:,}-file workspace: the view's work for one command: first {first * 1000:.1f} ms, "
                  f"later commands {later * 1000:.1f} ms (median of 10)")
            for note in notes:
                print(f"  note: {note}")
            return 0
        with FakeLLMServer("openai") as server:
            _once(args.python, ws, home, server, TRIVIAL, True)  # warm the caches both ways
            _once(args.python, ws, home, server, TRIVIAL, False)
            for name, command, target in (("true", TRIVIAL, 1.1), ("1,000 files", BUILD, 1.05)):
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
