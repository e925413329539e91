"""The key-to-line overhead of the shell integration, beyond the model's own time.

The loopback server (in a process of its own, as a real provider is) answers at once, so what is measured is
ours: starting ``swebash-ai --shell -c WORDS``, loading the settings, one HTTP round trip, extracting the
command, and the bash binding's own work around it (its function run with ``READLINE_LINE`` set, exactly as
Alt-E runs it). Also ``shell-init bash``, which every new shell pays. Aim: under 300 ms key to line.

Run it as a user installs: ``python -m compileall -q swebash_ai`` first when PYTHONDONTWRITEBYTECODE is set
(else every run compiles the package from source and the figures say nothing about an installed copy).

    python bench/shell_key.py [--runs 10]
    python -m venv --system-site-packages /tmp/v && /tmp/v/bin/pip install --no-deps . \
        && /tmp/v/bin/python bench/shell_key.py --installed      # the installed console script
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

from swebash_ai.testing.server_process import fake_server_process

ROOT = Path(__file__).resolve().parents[1]


def _timed(cmd: list[str], env: dict[str, str], cwd: Path, expect: str) -> float:
    start = time.perf_counter()
    res = subprocess.run(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                         timeout=120)
    elapsed = time.perf_counter() - start
    if res.returncode != 0 or expect not in res.stdout:
        raise SystemExit(f"{' '.join(cmd)} failed ({res.returncode}):\n{res.stdout}\n{res.stderr}")
    return elapsed


def _fmt(times: list[float]) -> str:
    return (f"median {statistics.median(times) * 1000:6.0f} ms   min {min(times) * 1000:6.0f} ms   "
            f"max {max(times) * 1000:6.0f} ms   (n={len(times)})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--installed", action="store_true",
                        help="time the swebash-ai script installed next to this python, not this checkout")
    args = parser.parse_args()
    answer = {"text": "```sh\nfind . -type f -size +1M\n```", "chunk_size": 0}
    with fake_server_process([answer] * (3 * args.runs + 2)) as url, tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        bin_dir = home / "bin"
        bin_dir.mkdir()
        launcher = bin_dir / "swebash-ai"  # this checkout, started the way the console script starts it
        installed = Path(sys.executable).parent / "swebash-ai"
        target = f'"{installed}"' if args.installed else f'"{sys.executable}" -m swebash_ai'
        launcher.write_text(f'#!/bin/sh\nexec {target} "$@"\n', encoding="utf-8")
        launcher.chmod(0o755)
        env = {
            **os.environ, "HOME": str(home), "SWEBASH_AI_HOME": str(home / "swh"), "SHELL": "/bin/bash",
            "SWEBASH_AI_MODEL": "openai/fake-model", "SWEBASH_AI_API_BASE": url, "SWEBASH_AI_API_KEY": "sk-bench",
            "OLLAMA_HOST": "http://127.0.0.1:9", "PYTHONPATH": "" if args.installed else str(ROOT),
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        }
        words = "find files bigger than 1 MB"
        expect = "find . -type f -size +1M"
        python = [_timed([sys.executable, "-c", "print('find . -type f -size +1M')"], env, home, expect)
                  for _ in range(args.runs)]
        init = [_timed([str(launcher), "shell-init", "bash"], env, home, "bind -x") for _ in range(args.runs)]
        shell = [_timed([str(launcher), "--shell", "-c", words], env, home, expect) for _ in range(args.runs)]
        key: list[float] = []
        if shutil.which("bash"):
            snippet = subprocess.run([str(launcher), "shell-init", "bash"], env=env, capture_output=True,
                                     text=True, check=True).stdout.replace("bind -x", ": bind -x")
            script = f'{snippet}\nREADLINE_LINE="{words}"\n__swebash_ai_line 2>/dev/null\nprintf "%s" "$READLINE_LINE"'
            key = [_timed(["bash", "-c", script], env, home, expect) for _ in range(args.runs)]
    print(f"python start-up alone        {_fmt(python)}")
    print(f"shell-init bash (new shell)  {_fmt(init)}")
    print(f"--shell -c (instant model)   {_fmt(shell)}")
    if key:
        print(f"Alt-E in bash, key to line   {_fmt(key)}")
    worst = statistics.median(key or shell) * 1000
    print(f"\nkey-to-line overhead: {worst:.0f} ms median ({'within' if worst < 300 else 'OVER'} the 300 ms aim)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
