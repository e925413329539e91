"""@path completion in a real terminal: tmux runs the app; the keys a user types complete and attach a file."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from test_tmux import ROOT, app_command, capture, wait_for_text

from swebash_ai.testing.server_process import fake_server_process

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def test_at_completion_with_tab_in_tmux(tmp_path: Path, workspace: Path) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("def main():\n    return 4242\n")
    (workspace / ".env").write_text("TOKEN=never-offered\n")
    socket = f"swebash-test-mention-{os.getpid()}"
    with fake_server_process([], echo=True) as url:
        env = {
            "HOME": str(tmp_path), "SWEBASH_AI_HOME": str(tmp_path / "swh"), "TERM": "xterm-256color",
            "SWEBASH_AI_MODEL": "openai/fake-model", "SWEBASH_AI_API_BASE": url,
            "SWEBASH_AI_API_KEY": "sk-test", "OLLAMA_HOST": "http://127.0.0.1:9", "PATH": os.environ["PATH"],
            "PYTHONPATH": str(ROOT), "LANG": "C.UTF-8",
        }
        command = ["env", "-i", *[f"{k}={v}" for k, v in env.items()], *app_command()]
        subprocess.run(["tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d", "-s", "app", "-x", "120",
                        "-y", "36", "-c", str(workspace), *command], check=True)

        def keys(*args: str) -> None:
            subprocess.run(["tmux", "-L", socket, "send-keys", "-t", "app", *args], check=True)

        try:
            wait_for_text(socket, "fake-model")  # the session is up (the status bar names the model)
            keys("-l", "explain @")
            screen = wait_for_text(socket, "src/")
            assert ".env" not in screen
            keys("-l", "sr/ap")
            wait_for_text(socket, "› src/app.py")
            keys("Tab")
            wait_for_text(socket, "explain @src/app.py")
            keys("Enter")
            screen = wait_for_text(socket, "📎 src/app.py (2 lines")
            wait_for_text(socket, "4242")  # the echo of what the provider received holds the file
            assert "never-offered" not in capture(socket)
        finally:
            subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, check=False)
