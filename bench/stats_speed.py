"""Speed of ``swebash-ai stats`` on a year of use: 10,000 turns, 50,000 tool calls, 400 older sessions.

Generates, in a temporary SWEBASH_AI_HOME: an audit log of 50,000 tool-call lines (15 tools, two MCP
servers, every decision kind), ``turns.jsonl`` with 10,000 turns (1-4 model requests each) and 400 saved
sessions from before turns were recorded (25 turns each, with tool rounds and 2 KiB tool results, as real
sessions carry file contents). Then times, as a user runs it (a new process each time):

* ``swebash-ai stats`` (text) and ``swebash-ai stats --json``: all records;
* ``swebash-ai stats --since 30d``: a window, which parses the audit log's timestamps;
* ``wc -l`` over the same files, the floor for reading them at all (same run, same cache state).

Every figure is min / median / max of ``--runs`` runs (default 5), after one warm-up, with the median
CPU time (user + system) of the command, the figure a busy machine disturbs least.

    python bench/stats_speed.py [--turns 10000] [--runs 5] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOOLS = ["read_file", "list_dir", "search", "run_command", "write_file", "edit_file", "fetch_url", "web_search",
         "path_exists", "file_info", "find_files", "mcp__tracker__open_issue", "mcp__tracker__list",
         "mcp__git__git_status", "mcp__git__git_log"]
DECISIONS = [("allow", "read-only", "ok"), ("allow", "read-only", "error"), ("ask", "user", "ok"),
             ("ask", "user", "denied"), ("ask", "user-session", "ok"), ("ask", "session", "ok"),
             ("ask", "--yes", "ok"), ("ask", "non-interactive", "denied"), ("deny", "protected-path", "denied"),
             ("ask", "user", "timeout")]


def generate(home: Path, turns: int, sessions: int) -> list[Path]:
    rng = random.Random(7)
    state = home
    state.mkdir(parents=True, exist_ok=True)
    now = time.time()
    year = 365 * 86400
    with (state / "audit.jsonl").open("w") as audit:
        for i in range(turns * 5):
            when = now - year + i * (year / (turns * 5))
            decision, by, outcome = rng.choice(DECISIONS)
            audit.write(json.dumps({
                "time": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(when)), "session": f"s{i // 125}",
                "tool": rng.choice(TOOLS), "call_id": f"c{i}", "arguments": {"path": f"src/m{i % 97}.py"},
                "decision": decision, "decided_by": by, "outcome": outcome, "exit_code": None,
                "duration": round(rng.expovariate(8), 3)}) + "\n")
    with (state / "turns.jsonl").open("w") as log:
        for i in range(turns):
            n = rng.randint(1, 4)
            requests = [[round(rng.uniform(0.3, 6), 3), rng.randint(1, 3) if k < n - 1 else 0, True, 0.2]
                        for k in range(n)]
            log.write(json.dumps({"time": now - year + i * (year / turns), "session": f"s{i // 25}",
                                  "model": "openai/gpt-4.1", "reason": "answered", "rounds": n - 1,
                                  "requests": requests, "retries": rng.randint(0, 1), "tool_calls": 2 * (n - 1),
                                  "prompt_tokens": rng.randint(1000, 30000), "completion_tokens": rng.randint(50, 900),
                                  "cost": 0.01}, separators=(",", ":")) + "\n")
    folder = home / "sessions"
    folder.mkdir(exist_ok=True)
    payload = "x" * 2048
    for s in range(sessions):
        lines = [json.dumps({"meta": {"id": f"old{s}", "created": now - year, "updated": now - year}})]
        for t in range(25):
            lines.append(json.dumps({"role": "user", "content": f"question {t}"}))
            for r in range(t % 3):
                lines.append(json.dumps({"role": "assistant", "content": "", "tool_calls": [
                    {"id": f"c{t}{r}", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]}))
                lines.append(json.dumps({"role": "tool", "tool_call_id": f"c{t}{r}", "content": payload}))
            lines.append(json.dumps({"role": "assistant", "content": "answer"}))
        (folder / f"old{s}.jsonl").write_text("\n".join(lines) + "\n")
    return [state / "audit.jsonl", state / "turns.jsonl", *sorted(folder.glob("*.jsonl"))]


def timed(cmd: list[str], env: dict[str, str], runs: int) -> tuple[list[float], list[float]]:
    """Wall-clock seconds and CPU seconds (user + system of the child: what a busy machine disturbs least)."""
    subprocess.run(cmd, env=env, capture_output=True, check=True)  # warm-up
    wall, cpu = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(cmd, env=env, capture_output=True, check=True)
        wall.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=10_000)
    ap.add_argument("--sessions", type=int, default=400)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    home = Path(tempfile.mkdtemp(prefix="swebash-stats-"))
    try:
        files = generate(home, args.turns, args.sessions)
        size = sum(f.stat().st_size for f in files) / 1e6
        env = {**os.environ, "SWEBASH_AI_HOME": str(home)}
        print(f"{args.turns:,} turns, {args.turns * 5:,} tool calls, {args.sessions} older sessions "
              f"({len(files)} files, {size:.1f} MB)")
        me = [sys.executable, "-m", "swebash_ai", "stats"]
        rows = [("swebash-ai stats", me), ("swebash-ai stats --json", [*me, "--json"]),
                ("swebash-ai stats --since 30d", [*me, "--since", "30d"]),
                ("wc -l (reading the files)", ["wc", "-l", *map(str, files)])]
        print(f"{'command':<32}{'min':>9}{'median':>9}{'max':>9}{'cpu med':>10}")
        for label, cmd in rows:
            t, cpu = timed(cmd, env, args.runs)
            print(f"{label:<32}{min(t):>8.3f}s{statistics.median(t):>8.3f}s{max(t):>8.3f}s"
                  f"{statistics.median(cpu):>9.3f}s")
    finally:
        if args.keep:
            print(f"kept: {home}")
        else:
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
