"""The real app in a real terminal: tmux runs ``python -m swebash_ai`` against the fake server process."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from swebash_ai.testing.server_process import fake_server_process

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

ROOT = Path(__file__).resolve().parents[2]


def app_command() -> list[str]:
    """``python -m swebash_ai`` once the CLI opens the TUI; until then, call run_tui directly."""
    if "run_tui" in (ROOT / "swebash_ai" / "frontends" / "cli.py").read_text(encoding="utf-8"):
        return [sys.executable, "-m", "swebash_ai"]
    code = ("from pathlib import Path; from swebash_ai.config.settings import load_settings; "
            "from swebash_ai.frontends.tui import run_tui; raise SystemExit(run_tui(load_settings(), cwd=Path.cwd()))")
    return [sys.executable, "-c", code]


@pytest.fixture
def server_url() -> Iterator[str]:
    with fake_server_process([{"text": "The answer is **forty-two**.", "chunk_size": 3}], echo=True) as url:
        yield url


def capture(socket: str) -> str:
    return subprocess.run(["tmux", "-L", socket, "capture-pane", "-p", "-t", "app"],
                          capture_output=True, text=True, check=False).stdout


def wait_for_text(socket: str, text: str, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = capture(socket)
        if text in screen:
            return screen
        time.sleep(0.1)
    raise AssertionError(f"{text!r} did not appear; the screen was:\n{screen}")


def test_real_app_answers_in_tmux(server_url: str, tmp_path: Path, workspace: Path) -> None:
    socket = f"swebash-test-{os.getpid()}"
    env = {
        "HOME": str(tmp_path), "SWEBASH_AI_HOME": str(tmp_path / "swh"), "TERM": "xterm-256color",
        "SWEBASH_AI_MODEL": "openai/fake-model", "SWEBASH_AI_API_BASE": server_url,
        "SWEBASH_AI_API_KEY": "sk-test", "OLLAMA_HOST": "http://127.0.0.1:9", "PATH": os.environ["PATH"],
        "PYTHONPATH": str(ROOT), "LANG": "C.UTF-8",
    }
    env_args = [f"{k}={v}" for k, v in env.items()]
    command = ["env", "-i", *env_args, *app_command()]
    subprocess.run(["tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d", "-s", "app", "-x", "120",
                    "-y", "36", "-c", str(workspace), *command], check=True)
    try:
        # The early frame shows the prompt before Textual has loaded: what is typed then is kept for it.
        wait_for_text(socket, "Ask anything")
        subprocess.run(["tmux", "-L", socket, "send-keys", "-t", "app", "-l", "what is the answer?"], check=True)
        subprocess.run(["tmux", "-L", socket, "send-keys", "-t", "app", "Enter"], check=True)
        screen = wait_for_text(socket, "forty-two")
        assert "what is the answer?" in screen
        assert "fake-model" in screen
        subprocess.run(["tmux", "-L", socket, "send-keys", "-t", "app", "C-c"], check=True)
        subprocess.run(["tmux", "-L", socket, "send-keys", "-t", "app", "C-c"], check=True)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and "Ask anything" in capture(socket):
            time.sleep(0.1)
        assert "Ask anything" not in capture(socket), "Ctrl+C twice did not quit"
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, check=False)


def test_shift_tab_changes_the_mode_shown_in_tmux(server_url: str, tmp_path: Path, workspace: Path) -> None:
    socket = f"swebash-mode-{os.getpid()}"
    env = {
        "HOME": str(tmp_path), "SWEBASH_AI_HOME": str(tmp_path / "swh"), "TERM": "xterm-256color",
        "SWEBASH_AI_MODEL": "openai/fake-model", "SWEBASH_AI_API_BASE": server_url,
        "SWEBASH_AI_API_KEY": "sk-test", "OLLAMA_HOST": "http://127.0.0.1:9", "PATH": os.environ["PATH"],
        "PYTHONPATH": str(ROOT), "LANG": "C.UTF-8",
    }
    command = ["env", "-i", *[f"{k}={v}" for k, v in env.items()], *app_command()]
    subprocess.run(["tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d", "-s", "app", "-x", "120",
                    "-y", "36", "-c", str(workspace), *command], check=True)
    try:
        wait_for_text(socket, "ask mode")
        wait_for_text(socket, "^p palette")  # Textual's footer: the app has the terminal, not the early frame
        from swebash_ai.sandbox import detect

        cycle = ["accept-edits", *(["auto"] if detect.choose("auto").ok else []), "plan", "ask"]
        for expected in (f"{mode} mode" for mode in cycle):
            subprocess.run(["tmux", "-L", socket, "send-keys", "-t", "app", "BTab"], check=True)
            wait_for_text(socket, expected, timeout=10)
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, check=False)
