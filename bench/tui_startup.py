"""Benchmark: time from launching the TUI to its first frame (goal under 0.4 s).

Each run starts a fresh interpreter on a pseudo-terminal, the way a user's shell would, running the same
code as ``swebash-ai`` (``swebash_ai.frontends.cli.main([])``: a cheap look at the config file, ``run_tui``, the full
settings validation after the first frame). Two times are printed:

- the first frame: when the chat pane's title first comes out on the terminal, read from the
  pseudo-terminal by the benchmark. That is the early frame (``frontends/tui/early_frame.py``), drawn before Textual
  loads; the screen then looks like the app, and keys typed are kept for the prompt.
- Textual's frame, from which the app answers keys: the app writes the wall-clock time of its first
  frame to the file named by ``SWEBASH_TUI_FIRST_FRAME_FILE`` and exits.

The session, the provider and the HTTP client are built after that frame, so they are not part of either
figure; their import happens in the background. Also printed: a bare interpreter start, and Textual's own
smallest app (one Static), for reference.

    python bench/tui_startup.py [--runs 7]
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

APP_CODE = (
    "import time; t0 = time.time(); import os; from swebash_ai.frontends.cli import main; "
    "open(os.environ['STARTUP_MARK'], 'w').write(repr(t0)); raise SystemExit(main([]))"
)

# The floor: Textual's own smallest app (one Static), first frame marked the same way.
FLOOR_CODE = """\
import time, os
t0 = time.time()
from textual.app import App
from textual.widgets import Static

class Hello(App):
    def compose(self):
        yield Static("hello")

    def on_mount(self):
        self.call_after_refresh(self.done)

    def done(self):
        open(os.environ["SWEBASH_TUI_FIRST_FRAME_FILE"], "w").write(f"{time.time()} {time.process_time()}")
        self.exit()

Hello().run()
"""


def run_on_pty(argv: list[str], env: dict[str, str], marker: bytes = b"") -> tuple[float, float | None]:
    """Run ``argv`` on a fresh 120x40 pseudo-terminal; return the seconds until it exits, and the wall-clock
    time at which ``marker`` first came out on the terminal (``None``: it never did)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    seen: list[float] = []

    def drain() -> None:
        out = b""
        try:
            while chunk := os.read(master, 65536):
                if marker and not seen:
                    out += chunk
                    if marker in out:
                        seen.append(time.time())
        except OSError:
            pass

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    start = time.time()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=ROOT,
                            start_new_session=True)
    os.close(slave)
    proc.wait(timeout=30)
    elapsed = time.time() - start
    reader.join(timeout=2)
    os.close(master)
    return elapsed, (seen[0] if seen else None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    early: list[float] = []
    first_frames: list[float] = []
    in_process: list[float] = []
    cpu: list[float] = []
    bare: list[float] = []
    floor: list[float] = []
    floor_cpu: list[float] = []
    with tempfile.TemporaryDirectory() as home:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SWEBASH_AI_")}
        env.update(SWEBASH_AI_HOME=home, TERM="xterm-256color", COLORTERM="truecolor",
                   OLLAMA_HOST="http://127.0.0.1:9", PYTHONPATH=str(ROOT))
        frame_file = Path(home) / "first-frame"
        mark_file = Path(home) / "started"
        env["SWEBASH_TUI_FIRST_FRAME_FILE"] = str(frame_file)
        env["STARTUP_MARK"] = str(mark_file)

        def first_frame(code: str, marker: bytes = b"") -> tuple[float, float, float, float | None]:
            """Launch ``code``; return the wall-clock times of its launch and of its first Textual frame,
            the CPU seconds it had used by then, and when ``marker`` first showed on the terminal."""
            frame_file.unlink(missing_ok=True)
            launched = time.time()
            _, shown = run_on_pty([sys.executable, "-c", code], env, marker)
            frame, used = (float(field) for field in frame_file.read_text().split())
            return launched, frame, used, shown

        run_on_pty([sys.executable, "-c", APP_CODE], env)  # warm the OS file cache, .pyc files, saved colours
        for _ in range(args.runs):
            # The chat pane's title: the first thing of a frame, early or Textual's.
            launched, frame, used, shown = first_frame(APP_CODE, marker=b"Chat")
            early.append((shown or frame) - launched)
            first_frames.append(frame - launched)
            in_process.append(frame - float(mark_file.read_text()))
            cpu.append(used)
            bare.append(run_on_pty([sys.executable, "-c", "pass"], env)[0])
            launched, frame, used, _ = first_frame(FLOOR_CODE)
            floor.append(frame - launched)
            floor_cpu.append(used)

    def show(label: str, values: list[float]) -> None:
        print(f"{label:<40} median {statistics.median(values) * 1000:6.0f} ms   "
              f"best {min(values) * 1000:6.0f} ms   worst {max(values) * 1000:6.0f} ms")

    print(f"runs: {args.runs}, terminal 120x40 (pty)")
    show("launch -> first frame (goal < 400 ms)", early)
    show("launch -> Textual's frame (interactive)", first_frames)
    show("  of which in Python code", in_process)
    show("  CPU used by then", cpu)
    show("bare interpreter start and exit", bare)
    show("Textual's one-Static app, first frame", floor)
    show("  CPU used by then", floor_cpu)


if __name__ == "__main__":
    main()
