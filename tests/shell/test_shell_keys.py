"""The key binding in real shells under tmux: words on the line, Alt-E, the command on the line, not run; Enter
runs it. ``swebash-ai`` on PATH is this checkout, talking to the loopback server in its own process."""

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

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (apt-get install tmux)"),
]


def _shell_params() -> list[object]:
    return [
        pytest.param(name, marks=pytest.mark.skipif(shutil.which(name) is None,
                                                    reason=f"{name} is not installed (apt-get install {name})"))
        for name in ("bash", "zsh", "fish")
    ]


class Pane:
    def __init__(self, socket: str) -> None:
        self.socket = socket

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True,
                              check=False).stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "sh")

    def keys(self, *keys: str, literal: bool = False) -> None:
        self.tmux("send-keys", "-t", "sh", *(["-l"] if literal else []), *keys)

    def wait(self, text: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} did not appear; the screen was:\n{screen}")

    def wait_prompt(self, ending: str, timeout: float = 20.0) -> str:
        """Wait until the last prompt line ends with ``ending`` (the shell has redrawn it); the screen."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            prompts = [line.rstrip() for line in screen.splitlines() if "READY" in line]
            if prompts and prompts[-1].endswith(ending):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"no prompt line ending with {ending!r}; the screen was:\n{screen}")


def _start(shell: str, home: Path, workspace: Path, url: str) -> Pane:
    bin_dir = home / "bin"
    bin_dir.mkdir()
    launcher = bin_dir / "swebash-ai"  # what the user's PATH finds, here this checkout
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m swebash_ai "$@"\n', encoding="utf-8")
    launcher.chmod(0o755)
    env = {
        "HOME": str(home), "SWEBASH_AI_HOME": str(home / "swh"), "TERM": "xterm-256color", "SHELL": shell,
        "SWEBASH_AI_MODEL": "openai/fake-model", "SWEBASH_AI_API_BASE": url, "SWEBASH_AI_API_KEY": "sk-test",
        "SWEBASH_AI_PROVIDER_RETRIES": "0", "OLLAMA_HOST": "http://127.0.0.1:9", "PYTHONPATH": str(ROOT),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "LANG": "C.UTF-8", "ZDOTDIR": str(home),
    }
    if shell == "bash":
        (home / "rc").write_text("PS1='READY$ '\neval \"$(swebash-ai shell-init bash)\"\n", encoding="utf-8")
        argv = ["bash", "--noprofile", "--rcfile", str(home / "rc"), "-i"]
    elif shell == "zsh":
        (home / ".zshrc").write_text("PS1='READY%% '\neval \"$(swebash-ai shell-init zsh)\"\n", encoding="utf-8")
        argv = ["zsh", "-i"]
    else:
        init = ("set -g fish_greeting ''; function fish_prompt; echo -n 'READY> '; end; "
                "swebash-ai shell-init fish | source")
        argv = ["fish", "--no-config", "-i", "-C", init]
    pane = Pane(f"swebash-shell-{os.getpid()}-{shell}")
    subprocess.run(["tmux", "-L", pane.socket, "-f", "/dev/null", "new-session", "-d", "-s", "sh", "-x", "150",
                    "-y", "30", "-c", str(workspace), "env", "-i", *[f"{k}={v}" for k, v in env.items()], *argv],
                   check=True)
    pane.wait("READY")
    return pane


@pytest.fixture
def panes() -> Iterator[list[Pane]]:
    """Started panes, whose tmux servers are stopped when the test ends, however it ends."""
    started: list[Pane] = []
    yield started
    for pane in started:
        pane.tmux("kill-server")


@pytest.mark.parametrize("shell", _shell_params())
def test_key_puts_the_command_on_the_line_and_enter_runs_it(shell: str, tmp_path: Path, workspace: Path,
                                                            panes: list[Pane]) -> None:
    # fenced, bare and prompted answers, one per shell: each must reach the line as the bare command
    answer = {"bash": "Here you go:\n\n```sh\n$ touch made-by-enter\n```\n", "zsh": "touch made-by-enter",
              "fish": "$ touch made-by-enter"}[shell]
    with fake_server_process([{"text": answer, "chunk_size": 5}]) as url:
        pane = _start(shell, tmp_path, workspace, url)
        panes.append(pane)
        pane.keys("create the file made-by-enter", literal=True)
        pane.wait("create the file made-by-enter")
        pane.keys("M-e")
        screen = pane.wait_prompt("touch made-by-enter")  # the words replaced, the command not run
        assert "would ask" in screen or "would run" in screen, "no verdict line"  # `touch` writes: it asks
        time.sleep(0.5)  # had it run, the file would exist by now
        assert not (workspace / "made-by-enter").exists(), "the key ran the command"
        # the cursor is at the end: typed text lands after the command
        pane.keys(" extra-arg", literal=True)
        pane.wait_prompt("touch made-by-enter extra-arg")
        pane.keys("Enter")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not (workspace / "extra-arg").exists():
            time.sleep(0.1)
        assert (workspace / "made-by-enter").exists() and (workspace / "extra-arg").exists(), pane.screen()


@pytest.mark.parametrize("shell", _shell_params())
def test_failure_leaves_the_line_and_empty_line_does_nothing(shell: str, tmp_path: Path, workspace: Path,
                                                            panes: list[Pane]) -> None:
    with fake_server_process([{"text": "I cannot help with that."}]) as url:
        pane = _start(shell, tmp_path, workspace, url)
        panes.append(pane)
        pane.keys("M-e")  # empty line: nothing asked, nothing shown
        time.sleep(0.5)
        assert "swebash-ai" not in pane.screen()
        pane.keys("do something impossible", literal=True)
        pane.keys("M-e")
        pane.wait("no command in the model's answer")
        pane.wait_prompt("do something impossible")  # the line is left as it was
        pane.keys(" still-here", literal=True)
        pane.wait_prompt("do something impossible still-here")
