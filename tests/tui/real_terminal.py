"""The installed app in a pseudo-terminal, driven with the bytes a terminal sends.

:class:`RealTerminal` starts ``python -m swebash_ai`` on the slave side of a pty (its own session, so the pty
is its controlling terminal, as in a terminal emulator), reads what it draws into ``pyte``'s screen, and
writes input in single ``os.write`` calls: a burst of keys, a bracketed paste (``ESC[200~ ... ESC[201~``)
arrive at the app as one read, as they do from a fast typist over SSH or a terminal's paste. Pilot cannot
show the faults of that path: it hands the app one event at a time.

What the prompt held when Enter was pressed is read back exactly from the prompt history file (the prompt
appends every message sent to it, one JSON string a line), not guessed from the screen.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pty
import select
import signal
import struct
import sys
import termios
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyte

ROOT = Path(__file__).resolve().parents[2]

ESC = "\x1b"
PASTE_START = ESC + "[200~"
PASTE_END = ESC + "[201~"
KEYS = {
    "enter": "\r", "backspace": "\x7f", "tab": "\t", "escape": ESC,
    "ctrl+u": "\x15", "ctrl+w": "\x17", "ctrl+a": "\x01", "ctrl+e": "\x05", "ctrl+k": "\x0b",
    "left": ESC + "[D", "right": ESC + "[C", "up": ESC + "[A", "down": ESC + "[B",
    "home": ESC + "[H", "end": ESC + "[F", "delete": ESC + "[3~", "f2": ESC + "OQ",
}
"""The bytes xterm (and tmux, and most terminals) send for these keys."""


def paste(text: str) -> str:
    """A bracketed paste of ``text``, its line breaks as terminals send them (carriage returns)."""
    return PASTE_START + text.replace("\n", "\r") + PASTE_END


class RealTerminal:
    """One app in one pty (see the module docstring). Use as a context manager."""

    def __init__(self, env: dict[str, str], cwd: Path, *, columns: int = 120, lines: int = 36) -> None:
        self.env = env
        self.cwd = cwd
        self.columns = columns
        self.lines = lines
        self.screen = pyte.Screen(columns, lines)
        self._stream = pyte.ByteStream(self.screen)
        self._lock = threading.Lock()
        self._fd = -1
        self._pid = 0
        self._reader: threading.Thread | None = None
        self.history = Path(env["SWEBASH_AI_HOME"]) / "prompt_history"

    def __enter__(self) -> RealTerminal:
        argv = [sys.executable, "-m", "swebash_ai"]
        pid, fd = pty.fork()
        if pid == 0:  # the child: its own session on the pty, then the app
            try:
                os.chdir(self.cwd)
                os.execve(sys.executable, argv, self.env)
            finally:
                os._exit(127)
        self._pid, self._fd = pid, fd
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", self.lines, self.columns, 0, 0))
        os.kill(pid, signal.SIGWINCH)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self._pid, signal.SIGTERM)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            done, _ = os.waitpid(self._pid, os.WNOHANG)
            if done:
                break
            time.sleep(0.05)
        else:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGKILL)
            os.waitpid(self._pid, 0)
        with contextlib.suppress(OSError):
            os.close(self._fd)

    def _read(self) -> None:
        while True:
            try:
                ready, _, _ = select.select([self._fd], [], [], 0.2)
                if not ready:
                    continue
                data = os.read(self._fd, 65536)
            except OSError:
                return
            if not data:
                return
            with self._lock:
                self._stream.feed(data)

    # --- output -------------------------------------------------------------------------------------
    def text(self) -> str:
        """The screen as text, one line a row."""
        with self._lock:
            return "\n".join(line.rstrip() for line in self.screen.display)

    def wait_for(self, text: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.text()
            if text in screen:
                return screen
            time.sleep(0.05)
        raise AssertionError(f"{text!r} did not appear; the screen was:\n{screen}")

    def border_colour(self, title: str) -> str:
        """The colour of the border left of a pane's ``title`` (the focused pane's border is highlighted)."""
        with self._lock:
            for row, line in enumerate(self.screen.display):
                col = line.find(f" {title} ")
                if col > 0:
                    return str(self.screen.buffer[row][col - 1].fg)
        raise AssertionError(f"no pane titled {title!r} on the screen:\n{self.text()}")

    def wait_for_border(self, title: str, wanted: Callable[[str], bool], timeout: float = 10.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            colour = self.border_colour(title)
            if wanted(colour):
                return colour
            time.sleep(0.05)
        raise AssertionError(f"the border of {title!r} stayed {colour}")

    def wait_ready(self) -> None:
        """Until Textual has the terminal (its footer shows) and the session is built (the model is named)."""
        self.wait_for("^p palette")
        self.wait_for("fake-model")

    # --- input --------------------------------------------------------------------------------------
    def write(self, data: str) -> None:
        """Send ``data`` as one write (the kernel hands it to the app in as few reads as it can)."""
        raw = data.encode("utf-8")
        while raw:
            written = os.write(self._fd, raw)
            raw = raw[written:]

    def sent(self, timeout: float = 20.0) -> str:
        """Press Enter and return what the prompt sent (the newest prompt history entry after it)."""
        before = self._entries()
        self.write(KEYS["enter"])
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            entries = self._entries()
            if len(entries) > len(before):
                return entries[-1]
            time.sleep(0.05)
        raise AssertionError(f"nothing was sent; the screen was:\n{self.text()}")

    def _entries(self) -> list[str]:
        try:
            lines = self.history.read_text(encoding="utf-8").splitlines()
        except OSError:
            return []
        out: list[Any] = [json.loads(line) for line in lines if line.strip()]
        return [entry for entry in out if isinstance(entry, str)]


def app_env(home: Path, server_url: str) -> dict[str, str]:
    """The environment of an app talking to the loopback fake server, nothing of the user's."""
    return {
        "HOME": str(home), "SWEBASH_AI_HOME": str(home / "swh"), "TERM": "xterm-256color",
        "SWEBASH_AI_MODEL": "openai/fake-model", "SWEBASH_AI_API_BASE": server_url,
        "SWEBASH_AI_API_KEY": "sk-test", "OLLAMA_HOST": "http://127.0.0.1:9", "PATH": os.environ["PATH"],
        "PYTHONPATH": str(ROOT), "LANG": "C.UTF-8",
    }
