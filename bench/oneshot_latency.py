"""Wall time of ``swebash-ai -c "hi"`` against an instantly answering loopback server, next to simonw's ``llm``.

Both CLIs are run as a user runs them (their console scripts, a fresh process each time, stdout a pipe),
alternately in the same loop so that machine load hits both alike, against the same fake OpenAI-compatible
server (real HTTP + SSE). ``llm`` is configured through an ``extra-openai-models.yaml`` in a temporary
``LLM_USER_PATH``; when it is not installed (``pip install llm``) only swebash-ai is measured.

Then ``python -X importtime`` shows the modules that cost the most on our one-shot path.

With ``--venvs DIR`` both are measured as users install them: ``llm`` from the registry into ``DIR/llm`` and
this checkout with ``pip install .`` (bytecode compiled) into ``DIR/ours``, each in its own fresh venv (made
once, reused by later runs). Peak RSS of every run is read with ``wait4``. ``--litellm`` also times a one-shot
answer through litellm: an ``anthropic/`` model against the loopback Anthropic Messages server, and an
``ollama_chat/`` model against its Ollama-native ``/api/chat``.

    python bench/oneshot_latency.py [--runs 10] [--top 15] [--venvs /tmp/oneshot-venvs] [--litellm]
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

REPO = Path(__file__).resolve().parent.parent
_PEAK_RSS: dict[str, list[float]] = {}


def _ours(venvs: Path | None = None) -> list[str]:
    if venvs is not None:
        return [str(venvs / "ours" / "bin" / "swebash-ai")]
    script = shutil.which("swebash-ai")
    return [script] if script else [sys.executable, "-m", "swebash_ai"]


def _make_venvs(venvs: Path) -> None:
    """A fresh venv per CLI, as a user installs it (once; delete DIR to rebuild after changing the code)."""
    for name, spec in (("llm", ["llm"]), ("ours", [str(REPO)])):
        folder = venvs / name
        if (folder / "bin" / ("llm" if name == "llm" else "swebash-ai")).exists():
            continue
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
        subprocess.run([str(folder / "bin" / "pip"), "install", "-q", *spec], check=True, env=env)


def _timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate(timeout=120)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err}")
    return elapsed, out


def _timed_rss(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, str, float]:
    """Wall seconds, stdout and peak RSS (MiB) of one run; stdout/stderr go to files so wait4 reaps it."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err.read()}")
        return elapsed, out.read(), usage.ru_maxrss / 1024


def _llm_env(base: dict[str, str], api_base: str, folder: Path, llm: str | None) -> dict[str, str] | None:
    if llm is None:
        return None
    (folder / "extra-openai-models.yaml").write_text(
        f'- model_id: fake\n  model_name: fake-model\n  api_base: "{api_base}"\n  api_key_name: fake\n'
    )
    (folder / "keys.json").write_text(json.dumps({"fake": "sk-fake"}))
    return {**base, "LLM_USER_PATH": str(folder)}


def _importtime(env: dict[str, str], cwd: Path, top: int, python: str) -> list[tuple[int, int, str]]:
    cmd = [python, "-X", "importtime", "-m", "swebash_ai", "-c", "hi"]
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
    parser.add_argument("--venvs", type=Path, help="install both CLIs into fresh venvs under this folder")
    parser.add_argument("--litellm", action="store_true", help="also time an answer through litellm")
    args = parser.parse_args()
    if args.venvs is not None:
        _make_venvs(args.venvs)
    llm = str(args.venvs / "llm" / "bin" / "llm") if args.venvs is not None else shutil.which("llm")
    python = str(args.venvs / "ours" / "bin" / "python") if args.venvs is not None else sys.executable

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
        llm_env = _llm_env(base, server.base_url, llm_home, llm)
        ours_cmd = [*_ours(args.venvs), "-c", "hi"]
        llm_cmd = [str(llm), "-m", "fake", "hi"]

        # Warm-up (bytecode caches, page cache), not counted.
        _, answer = _timed(ours_cmd, ours_env, cwd)
        assert answer.strip() == "Hello! How can I help?", answer
        if llm_env is not None:
            _, answer = _timed(llm_cmd, llm_env, cwd)
            assert answer.strip() == "Hello! How can I help?", answer

        ours: list[float] = []
        peer: list[float] = []
        ours_rss: list[float] = []
        peer_rss: list[float] = []
        for _ in range(args.runs):
            wall, _, rss = _timed_rss(ours_cmd, ours_env, cwd)
            ours.append(wall)
            ours_rss.append(rss)
            if llm_env is not None:
                wall, _, rss = _timed_rss(llm_cmd, llm_env, cwd)
                peer.append(wall)
                peer_rss.append(rss)
        floor = [_timed([sys.executable, "-c", "pass"], base, cwd)[0] for _ in range(5)]
        version = [_timed([*_ours(args.venvs), "--version"], ours_env, cwd)[0] for _ in range(5)]
        lite = _litellm_runs(ours_cmd, ours_env, cwd, args.runs, "anthropic") if args.litellm else []
        lite_ollama = _litellm_runs(ours_cmd, ours_env, cwd, args.runs, "ollama") if args.litellm else []

        print(f"swebash-ai -c hi   {_fmt(ours)}   [{' '.join(ours_cmd[:-2])}]")
        if llm_env is not None:
            print(f"llm hi (0.{_llm_version(str(llm))})  {_fmt(peer)}")
            ratio = statistics.median(ours) / statistics.median(peer)
            print(f"ratio swebash-ai / llm (medians): {ratio:.2f}")
            print(f"peak RSS: swebash-ai max {max(ours_rss):.1f} MiB, llm max {max(peer_rss):.1f} MiB")
        else:
            print(f"peak RSS: swebash-ai max {max(ours_rss):.1f} MiB")
        if lite:
            print(f"swebash-ai -c hi via litellm (anthropic/ format)  {_fmt(lite)}")
            print(f"swebash-ai -c hi via litellm (ollama_chat/ format)  {_fmt(lite_ollama)}")
        if llm_env is None:
            print("llm is not installed (pip install llm, or --venvs): measured swebash-ai only")
        print(f"swebash-ai --version {_fmt(version)}   (our start-up without a model)")
        print(f"python -c pass     {_fmt(floor)}   (interpreter start-up floor)")
        print(f"\npython -X importtime -m swebash_ai -c hi: top {args.top} by cumulative time")
        print(f"{'cumulative':>12} {'self':>10}  module")
        for cumulative, own, name in _importtime(ours_env, cwd, args.top, python):
            print(f"{cumulative / 1000:10.1f}ms {own / 1000:8.1f}ms  {name}")
    return 0


def _litellm_runs(cmd: list[str], env: dict[str, str], cwd: Path, runs: int, dialect: str) -> list[float]:
    """Wall times of the same one-shot through litellm (an Anthropic- or Ollama-format server on loopback)."""
    model = {"anthropic": "anthropic/claude-sonnet-4-5", "ollama": "ollama_chat/fake-model"}[dialect]
    with FakeLLMServer(dialect) as server:  # type: ignore[arg-type]
        server.responder = lambda body: Reply.text("Hello! How can I help?", chunk_size=0)
        lite_env = {**env, "SWEBASH_AI_MODEL": model, "SWEBASH_AI_API_BASE": server.base_url}
        _timed(cmd, lite_env, cwd)  # warm-up
        return [_timed(cmd, lite_env, cwd)[0] for _ in range(runs)]


def _llm_version(llm: str) -> str:
    try:
        out = subprocess.run([llm, "--version"], capture_output=True, text=True, timeout=30).stdout
    except OSError:
        return "?"
    return out.strip().rsplit(" ", 1)[-1].removeprefix("0.")


if __name__ == "__main__":
    sys.exit(main())
