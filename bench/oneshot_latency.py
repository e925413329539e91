"""Wall time of ``swebash-ai -c "hi"`` against an instantly answering loopback server, next to simonw's ``llm``.

Both CLIs are run as a user runs them (their console scripts, a fresh process each time, stdout a pipe),
alternately in the same loop so that machine load hits both alike, against the same fake OpenAI-compatible
server (real HTTP + SSE). ``llm`` is configured through an ``extra-openai-models.yaml`` in a temporary
``LLM_USER_PATH``; when it is not installed (``pip install llm``) only swebash-ai is measured.

Then ``python -X importtime`` shows the modules that cost the most on our one-shot path.

    python bench/oneshot_latency.py [--runs 10] [--top 15]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from swebash_ai.testing.fake_server import FakeLLMServer, Reply


def _ours() -> list[str]:
    script = shutil.which("swebash-ai")
    return [script] if script else [sys.executable, "-m", "swebash_ai"]


def _timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    start = time.perf_counter()
    res = subprocess.run(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                         timeout=120)
    elapsed = time.perf_counter() - start
    if res.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({res.returncode}):\n{res.stderr}")
    return elapsed, res.stdout


def _llm_env(base: dict[str, str], api_base: str, folder: Path) -> dict[str, str] | None:
    if shutil.which("llm") is None:
        return None
    (folder / "extra-openai-models.yaml").write_text(
        f'- model_id: fake\n  model_name: fake-model\n  api_base: "{api_base}"\n  api_key_name: fake\n'
    )
    (folder / "keys.json").write_text(json.dumps({"fake": "sk-fake"}))
    return {**base, "LLM_USER_PATH": str(folder)}


def _importtime(env: dict[str, str], cwd: Path, top: int) -> list[tuple[int, int, str]]:
    cmd = [sys.executable, "-X", "importtime", "-m", "swebash_ai", "-c", "hi"]
    res = subprocess.run(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                         timeout=120)
    rows = []
    for line in res.stderr.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if match and len(match.group(3)) <= 2:  # top-level imports (and their direct children)
            rows.append((int(match.group(2)), int(match.group(1)), match.group(3) + match.group(4)))
    rows.sort(reverse=True)
    return rows[:top]


def _fmt(times: list[float]) -> str:
    return (f"median {statistics.median(times) * 1000:7.0f} ms   min {min(times) * 1000:6.0f} ms   "
            f"max {max(times) * 1000:6.0f} ms   (n={len(times)})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()

    with FakeLLMServer("openai") as server, tempfile.TemporaryDirectory() as tmp:
        server.responder = lambda body: Reply.text("Hello! How can I help?", chunk_size=0)
        root = Path(tmp)
        home, llm_home, cwd = root / "home", root / "llm", root / "ws"
        for d in (home, llm_home, cwd):
            d.mkdir()
        base = {k: v for k, v in os.environ.items() if not k.startswith(("SWEBASH_AI_", "OPENAI_", "LLM_"))}
        base["HOME"] = str(home)
        ours_env = {**base, "SWEBASH_AI_HOME": str(home / ".swebash-ai"), "SWEBASH_AI_MODEL": "openai/fake-model",
                    "SWEBASH_AI_API_BASE": server.base_url, "SWEBASH_AI_API_KEY": "sk-fake",
                    "OLLAMA_HOST": "http://127.0.0.1:9"}
        llm_env = _llm_env(base, server.base_url, llm_home)
        ours_cmd = [*_ours(), "-c", "hi"]
        llm_cmd = ["llm", "-m", "fake", "hi"]

        # Warm-up (bytecode caches, page cache), not counted.
        _, answer = _timed(ours_cmd, ours_env, cwd)
        assert answer.strip() == "Hello! How can I help?", answer
        if llm_env is not None:
            _, answer = _timed(llm_cmd, llm_env, cwd)
            assert answer.strip() == "Hello! How can I help?", answer

        ours: list[float] = []
        peer: list[float] = []
        for _ in range(args.runs):
            ours.append(_timed(ours_cmd, ours_env, cwd)[0])
            if llm_env is not None:
                peer.append(_timed(llm_cmd, llm_env, cwd)[0])
        floor = [_timed([sys.executable, "-c", "pass"], base, cwd)[0] for _ in range(5)]
        version = [_timed([*_ours(), "--version"], ours_env, cwd)[0] for _ in range(5)]

        print(f"swebash-ai -c hi   {_fmt(ours)}   [{' '.join(ours_cmd[:-2])}]")
        if llm_env is not None:
            print(f"llm hi (0.{_llm_version()})  {_fmt(peer)}")
            ratio = statistics.median(ours) / statistics.median(peer)
            print(f"ratio swebash-ai / llm (medians): {ratio:.2f}")
        else:
            print("llm is not installed (pip install llm): measured swebash-ai only")
        print(f"swebash-ai --version {_fmt(version)}   (our start-up without a model)")
        print(f"python -c pass     {_fmt(floor)}   (interpreter start-up floor)")
        print(f"\npython -X importtime -m swebash_ai -c hi: top {args.top} by cumulative time")
        print(f"{'cumulative':>12} {'self':>10}  module")
        for cumulative, own, name in _importtime(ours_env, cwd, args.top):
            print(f"{cumulative / 1000:10.1f}ms {own / 1000:8.1f}ms  {name}")
    return 0


def _llm_version() -> str:
    try:
        out = subprocess.run(["llm", "--version"], capture_output=True, text=True, timeout=30).stdout
    except OSError:
        return "?"
    return out.strip().rsplit(" ", 1)[-1].removeprefix("0.")


if __name__ == "__main__":
    sys.exit(main())
