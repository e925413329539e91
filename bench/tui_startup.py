"""Benchmark: time from launching the TUI to its first frame (goal under 0.4 s).

Each run starts a fresh interpreter on a pseudo-terminal, the way a user's shell would, running the same
code as ``swebash-ai`` (``swebash_ai.cli.main([])``: a cheap look at the config file, ``run_tui``, the full
settings validation after the first frame). The app writes the wall-clock time of its first
frame to the file named by ``SWEBASH_TUI_FIRST_FRAME_FILE`` and exits. The session, the provider and the
HTTP client are built after that frame, so they are not part of the figure; their import happens in the
background. Also printed: a bare interpreter start, for reference.

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
    "import time; t0 = time.time(); import os; from swebash_ai.cli import main; "
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


def run_on_pty(argv: list[str], env: dict[str, str]) -> float:
    """Run ``argv`` on a fresh 120x40 pseudo-terminal; return the seconds until it exits."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))

    def drain() -> None:
        try:
            while os.read(master, 65536):
                pass
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
    os.close(master)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    first_frames: list[float] = []
    in_process: list[float] = []
    cpu: list[float] = []
    bare: list[float] = []
    floor: list[float] = []
    floor_cpu: list[float] = []
    with tempfile.TemporaryDirectory() as home:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SWEBASH_AI_")}
        env.update(SWEBASH_AI_HOME=home, TERM="xterm-256color", OLLAMA_HOST="http://127.0.0.1:9",
                   PYTHONPATH=str(ROOT))
        frame_file = Path(home) / "first-frame"
        mark_file = Path(home) / "started"
        env["SWEBASH_TUI_FIRST_FRAME_FILE"] = str(frame_file)
        env["STARTUP_MARK"] = str(mark_file)

        def first_frame(code: str) -> tuple[float, float, float]:
            """Launch ``code``; return the wall-clock times of its launch and first frame, and the CPU
            seconds it had used by then."""
            frame_file.unlink(missing_ok=True)
            launched = time.time()
            run_on_pty([sys.executable, "-c", code], env)
            frame, used = (float(field) for field in frame_file.read_text().split())
            return launched, frame, used

        run_on_pty([sys.executable, "-c", APP_CODE], env)  # warm the OS file cache and .pyc files
        for _ in range(args.runs):
            launched, frame, used = first_frame(APP_CODE)
            first_frames.append(frame - launched)
            in_process.append(frame - float(mark_file.read_text()))
            cpu.append(used)
            bare.append(run_on_pty([sys.executable, "-c", "pass"], env))
            launched, frame, used = first_frame(FLOOR_CODE)
            floor.append(frame - launched)
            floor_cpu.append(used)

    def show(label: str, values: list[float]) -> None:
        print(f"{label:<40} median {statistics.median(values) * 1000:6.0f} ms   "
              f"best {min(values) * 1000:6.0f} ms   worst {max(values) * 1000:6.0f} ms")

    print(f"runs: {args.runs}, terminal 120x40 (pty)")
    show("launch -> first frame (goal < 400 ms)", first_frames)
    show("  of which in Python code", in_process)
    show("  CPU used by then", cpu)
    show("bare interpreter start and exit", bare)
    show("Textual's one-Static app, first frame", floor)
    show("  CPU used by then", floor_cpu)


if __name__ == "__main__":
    main()
