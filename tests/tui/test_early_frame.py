"""The early frame: drawn before Textual loads, where Textual then draws; the terminal is left as found."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import re
import struct
import termios
import threading
import time
from pathlib import Path

import pytest
from textual.drivers.linux_driver import LinuxDriver

from swebash_ai.config.file import StartInfo
from swebash_ai.frontends.tui import early_frame
from swebash_ai.frontends.tui.early_frame import ENTER, LEAVE, EarlyFrame, Painter, driver_class, render, status_text
from swebash_ai.frontends.tui.widgets.status import StatusBar
from swebash_ai.storage.locations import locations
from tests.tui.tui_helpers import idle

TRUECOLOR = {"COLORTERM": "truecolor", "TERM": "xterm-256color"}
_CURSOR = re.compile(r"\x1b\[(\d+);(\d+)H")
_OTHER = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def screen_text(frame: str, width: int, height: int) -> list[str]:
    """What a terminal shows after ``frame`` (cursor moves and text; colours dropped)."""
    rows = [[" "] * width for _ in range(height)]
    row = col = 0
    pos = 0
    while pos < len(frame):
        move = _CURSOR.match(frame, pos)
        if move:
            row, col = int(move[1]) - 1, int(move[2]) - 1
            pos = move.end()
            continue
        other = _OTHER.match(frame, pos)
        if other:
            pos = other.end()
            continue
        if row < height and col < width:
            rows[row][col] = frame[pos]
        col += 1
        pos += 1
    return ["".join(r) for r in rows]


def textual_text(app) -> list[str]:
    return [strip.text for strip in app.screen._compositor.render_strips()]


def a_frame(width: int, height: int, status: str = "openai/x  ~/w  0 tokens") -> list[str]:
    colours = early_frame.theme_colours("dark", Path("/nonexistent"), Path("/nonexistent"))
    return screen_text(render(width, height, status=status, paint=Painter(colours, "truecolor")), width, height)


SIZES = [(120, 40), (100, 30), (101, 31), (133, 45), (160, 50), (80, 30), (99, 24)]  # wide, then narrow


@pytest.mark.parametrize(("width", "height"), SIZES)
async def test_the_early_frame_has_the_outline_of_textuals_first_frame(make_app, width, height) -> None:
    app = make_app()
    async with app.run_test(size=(width, height)) as pilot:
        await idle(pilot)
        real = textual_text(app)
    early = a_frame(width, height)
    main_height = height - 5
    chat_bottom = main_height - 1 if width >= 100 else main_height * 2 // 3 - 1
    # Pane borders and titles, the tool pane's placeholder, the prompt: the same cells.
    for row in (0, chat_bottom, main_height - 1, height - 5, height - 4, height - 3):
        assert early[row] == real[row], f"row {row}"
    tools_row = 1 if width >= 100 else chat_bottom + 2
    assert "No tool calls yet." in early[tools_row] and early[tools_row] == real[tools_row]


async def test_the_status_line_is_the_status_bars(make_app, workspace) -> None:
    start = StartInfo(locations(), "dark", "openai/gpt-x", "work")
    app = make_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await idle(pilot)
        bar = app.query_one(StatusBar)
        bar.set_info(start.model, start.profile, workspace)
        await pilot.pause()
        assert str(bar.render()).strip() == status_text(start, workspace)


def test_a_terminal_of_unknown_colours_gets_no_early_frame() -> None:
    assert early_frame.terminal_colours({"TERM": "xterm"}) is None
    assert early_frame.terminal_colours({"TERM": "xterm-256color"}) == "256"
    assert early_frame.terminal_colours({"TERM": "xterm", "COLORTERM": "24bit"}) == "truecolor"
    start = StartInfo(locations(), "dark", "", None)
    assert EarlyFrame.draw(start, Path.cwd(), {"TERM": "dumb"}, out=io.StringIO(), tty_in=0) is None
    assert EarlyFrame.draw(start, Path.cwd(), TRUECOLOR, out=io.StringIO(), tty_in=0) is None  # not a tty


def test_256_colour_terminals_get_the_palette_colours_textual_will_use() -> None:
    """Textual writes its colours through a Rich console, whose mapping to the 256-colour palette is not
    the nearest cube colour (the dark theme's background becomes black, 16, not the grey 234): the early
    frame must write the same codes, or its colours shift when Textual takes over."""
    from rich.color import Color
    from rich.console import Console
    from rich.style import Style

    console = Console(color_system="256", force_terminal=True, file=io.StringIO())
    for rgb in ((26, 27, 38), (42, 44, 61), (240, 240, 235), (95, 168, 211), (0, 0, 0), (255, 255, 255)):
        with console.capture() as captured:
            console.print(" ", style=Style(bgcolor=Color.from_rgb(*rgb)), end="")
        ours = Painter({"fg": rgb, "bg": rgb}, "256").at(0, 0, " ", "fg", "bg")
        textual_code = re.search(r"48;5;(\d+)", captured.get())[1]
        assert f"48;5;{textual_code}m" in ours, (rgb, captured.get(), ours)
    assert early_frame._xterm_256((26, 27, 38)) == 16


class Terminal:
    """A pseudo-terminal 100x30: the app's end (a text stream and its descriptor) and what came out of it."""

    def __init__(self) -> None:
        self.main, self.side = pty.openpty()
        fcntl.ioctl(self.side, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        self.out = os.fdopen(os.dup(self.side), "w", encoding="utf-8")
        self._data = b""
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        try:
            while chunk := os.read(self.main, 65536):
                with self._lock:
                    self._data += chunk
        except OSError:
            pass

    def shown(self, settle: float = 0.2) -> str:
        """What came out since the last call."""
        time.sleep(settle)
        with self._lock:
            data, self._data = self._data, b""
        return data.decode("utf-8", "replace")

    def close(self) -> None:
        self.out.close()
        os.close(self.side)
        os.close(self.main)


@pytest.fixture
def terminal():
    term = Terminal()
    yield term
    term.close()


def test_a_start_that_fails_before_textual_leaves_the_terminal_as_found(terminal) -> None:
    out, side = terminal.out, terminal.side
    before = termios.tcgetattr(side)
    frame = EarlyFrame.draw(StartInfo(locations(), "dark", "openai/m", None), Path.cwd(), TRUECOLOR,
                            out=out, tty_in=side)
    assert frame is not None
    quiet = termios.tcgetattr(side)
    assert not quiet[3] & termios.ECHO and not quiet[3] & termios.ICANON  # typed keys are not echoed
    assert quiet[3] & termios.ISIG  # Ctrl-C still interrupts
    assert not quiet[0] & termios.ICRNL  # Enter typed now stays Enter (a newline would not send the prompt)
    shown = terminal.shown()
    assert shown.startswith(ENTER) and "Chat" in shown and "openai/m" in shown
    frame.close()
    assert terminal.shown().endswith(LEAVE)
    assert termios.tcgetattr(side) == before


def test_textual_takes_over_the_screen_and_the_terminal_as_found(terminal, monkeypatch) -> None:
    out, side = terminal.out, terminal.side
    before = termios.tcgetattr(side)
    frame = EarlyFrame.draw(StartInfo(locations(), "dark", "", None), Path.cwd(), TRUECOLOR, out=out, tty_in=side)
    assert frame is not None
    assert "Chat" in terminal.shown()
    started: list[list[object]] = []
    written: list[str] = []
    monkeypatch.setattr(LinuxDriver, "start_application_mode",
                        lambda self: started.append(termios.tcgetattr(side)))
    monkeypatch.setattr(LinuxDriver, "write", lambda self, data: written.append(data))
    driver = driver_class(frame).__new__(driver_class(frame))
    driver.start_application_mode()
    assert started == [before]  # Textual saves (and restores at exit) the settings found before us
    for data in ("\x1b[?1049h", "\x1b[?1000h", "\x1b[?1049h"):
        driver.write(data)
    assert written == ["\x1b[?1000h", "\x1b[?1049h"]  # only the first switch, which would clear the frame
    frame.close()
    assert terminal.shown() == ""  # Textual leaves the alternate screen itself


async def test_keys_typed_while_the_app_starts_reach_the_prompt(make_app) -> None:
    """Keys the terminal delivers before the prompt exists are kept and given to it once it does. Enter
    typed before the app had the terminal arrives as a newline (the terminal's line editing): it sends."""
    from textual import events

    from swebash_ai.frontends.tui.widgets.chat import UserMessage

    app = make_app()
    for key, char in (("h", "h"), ("i", "i"), ("ctrl+j", "\n"), ("o", "o"), ("k", "k")):
        app.post_message(events.Key(key, char))  # before run: the app is not even mounted
    async with app.run_test(size=(100, 30)) as pilot:
        await idle(pilot)
        await pilot.pause()
        assert [str(m.render()) for m in app.chat.query(UserMessage)] == ["hi"]
        assert app.prompt.text == "ok"


async def test_the_app_saves_the_colours_of_its_first_frame(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await idle(pilot)
        await pilot.app.workers.wait_for_complete()
        colours = early_frame.theme_colours(app.theme, Path("/nonexistent"), app.start.locations.state_dir)
        border = app.chat.styles.border_top[1].rgb
        muted = app.activity.query_one(".placeholder").rich_style.color.triplet
        assert colours["panel-lighten-1"] == border  # computed by Textual; the theme file has no such colour
        assert colours["text-muted"] == tuple(muted)


@pytest.mark.parametrize(("width", "height"), [(1, 1), (10, 3), (30, 6), (99, 12), (100, 12), (300, 90)])
def test_any_terminal_size_gets_a_frame_that_fits(width, height) -> None:
    lines = a_frame(width, height)
    assert len(lines) == height and all(len(line) == width for line in lines)
    frame = render(width, height, status="s", paint=Painter({n: (1, 2, 3) for n in early_frame.COLOURS}, "256"))
    for move in _CURSOR.finditer(frame):  # nothing is drawn outside the terminal
        assert 1 <= int(move[1]) <= max(1, height) and 1 <= int(move[2]) <= max(1, width)


@pytest.mark.parametrize("text", ["plain", "~/项目/代码", "cafe\u0301 ~/x", "~/" + "目" * 80])
def test_text_is_fitted_to_terminal_cells(text) -> None:
    for width in (1, 5, 12, 40):
        fitted = early_frame._fit(text, width)
        assert sum(early_frame._cells(c) for c in fitted) == width, (text, width, fitted)
