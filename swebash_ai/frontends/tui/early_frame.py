"""The first frame, drawn before Textual loads.

Loading Textual and building its first frame takes about 0.4 s on a small machine (its own one-widget app
does not do better), and until then the terminal still shows the shell. So the interactive app draws the
outline of its main screen first, with the standard library only: the chat and tool panes, the prompt,
the status bar (model, profile, working directory), in the theme's colours, on the alternate screen.
Textual then takes the same screen over (:func:`driver_class`) and draws the real frame on top.

Keys typed meanwhile are kept: the terminal stops echoing while the early frame shows, and what was typed
waits in the terminal's input queue until Textual reads it. If the app stops before Textual takes over
(an error, Ctrl-C), :meth:`EarlyFrame.close` puts the terminal back as it was.

The colours come from the theme file, then from what the app saved the last time it ran with that theme
(:func:`save_colours`: some, like the pane borders, are computed by Textual from the theme).
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import sys
import tomllib
import unicodedata
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from swebash_ai.storage import private_files
from swebash_ai.storage.locations import short_path

if TYPE_CHECKING:
    from swebash_ai.config.file import StartInfo

log = logging.getLogger(__name__)

PROMPT_PLACEHOLDER = "Ask anything · /help for commands · !command runs a command"
NO_TOOL_CALLS = "No tool calls yet."
NARROW_WIDTH = 100
"""Below this many columns the tool pane goes under the chat instead of beside it."""
BUILTIN_THEMES = Path(__file__).parent / "themes"
CACHE_NAME = "frame-colours.json"

#: The theme variables the early frame uses, and what stands in for each before the app saved them.
COLOURS: dict[str, str] = {
    "background": "background", "surface": "surface", "panel": "panel", "primary": "primary",
    "panel-lighten-1": "panel", "text": "foreground", "text-muted": "foreground",
    "footer-background": "panel",
}

ENTER = "\x1b[?1049h\x1b[?25l\x1b[?7l"  # the alternate screen, no cursor, no line wrap
LEAVE = "\x1b[0m\x1b[?7h\x1b[?25h\x1b[?1049l"


def terminal_colours(environ: Mapping[str, str]) -> str | None:
    """``"truecolor"``, ``"256"``, or ``None`` when the terminal's colours are unknown (no early frame)."""
    if environ.get("COLORTERM", "").lower() in ("truecolor", "24bit"):
        return "truecolor"
    term = environ.get("TERM", "")
    if "256color" in term:
        return "256"
    return None


def _rgb(value: str) -> tuple[int, int, int] | None:
    text = value.strip().lstrip("#")
    if len(text) != 6:
        return None
    try:
        return int(text[0:2], 16), int(text[2:4], 16), int(text[4:6], 16)
    except ValueError:
        return None


@functools.lru_cache(maxsize=64)
def _xterm_256(rgb: tuple[int, int, int]) -> int:
    """The 256-colour palette index Textual will draw ``rgb`` with (it renders through Rich, whose mapping
    this is), so the colours do not shift when Textual takes over. Rich is imported only for such
    terminals (~7 ms)."""
    from rich.color import Color, ColorSystem

    number = Color.from_rgb(*rgb).downgrade(ColorSystem.EIGHT_BIT).number
    return 16 if number is None else number


class Painter:
    """Builds the escape sequences of one frame."""

    def __init__(self, colours: Mapping[str, tuple[int, int, int]], mode: str) -> None:
        self.colours = colours
        self.mode = mode

    def _code(self, name: str, ground: int) -> str:
        rgb = self.colours[name]
        if self.mode == "truecolor":
            return f"{ground};2;{rgb[0]};{rgb[1]};{rgb[2]}"
        return f"{ground};5;{_xterm_256(rgb)}"

    def at(self, row: int, col: int, text: str, fg: str, bg: str) -> str:
        """``text`` at (``row``, ``col``), both from 0, in the theme colours named ``fg`` and ``bg``."""
        return f"\x1b[{row + 1};{col + 1}H\x1b[0;{self._code(fg, 38)};{self._code(bg, 48)}m{text}"


def _box(paint: Painter, top: int, left: int, height: int, width: int, title: str, bg: str) -> list[str]:
    """A rounded border with a title, its inside filled with ``bg``."""
    if height < 2 or width < 4:
        return []
    title_text = f" {title} " if len(title) + 6 <= width else ""
    out = [paint.at(top, left, "╭─", "panel-lighten-1", bg),
           paint.at(top, left + 2, title_text, "text-muted", bg),
           paint.at(top, left + 2 + len(title_text), "─" * (width - 3 - len(title_text)) + "╮", "panel-lighten-1", bg)]
    for row in range(top + 1, top + height - 1):
        out.append(paint.at(row, left, "│", "panel-lighten-1", bg)
                   + paint.at(row, left + 1, " " * (width - 2), "text", bg)
                   + paint.at(row, left + width - 1, "│", "panel-lighten-1", bg))
    out.append(paint.at(top + height - 1, left, "╰" + "─" * (width - 2) + "╯", "panel-lighten-1", bg))
    return out


def _cells(char: str) -> int:
    """Terminal cells of one character: 2 for wide East Asian ones, 0 for combining marks, else 1."""
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _fit(text: str, width: int) -> str:
    """``text`` cut (with an ellipsis) or padded to exactly ``width`` terminal cells."""
    if width <= 0:
        return ""
    cells = sum(_cells(c) for c in text)
    if cells <= width:
        return text + " " * (width - cells)
    out, used = [], 0
    for char in text:
        if used + _cells(char) > width - 1:  # room for the ellipsis
            break
        out.append(char)
        used += _cells(char)
    return "".join(out) + "…" + " " * (width - 1 - used)


def render(width: int, height: int, *, status: str, paint: Painter) -> str:
    """The whole frame for a ``width`` x ``height`` terminal: the layout of the main screen
    (``frontends/tui/app.tcss``) without its contents."""
    out = [paint.at(0, 0, "", "text", "background") + "\x1b[2J"]  # clear to the background colour
    main_height = max(0, height - 5)  # below: the prompt (3 rows), the status bar, the footer
    if width < NARROW_WIDTH:
        chat_height = main_height * 2 // 3
        out += _box(paint, 0, 0, chat_height, width, "Chat", "background")
        out += _box(paint, chat_height, 0, main_height - chat_height, width, "Tools", "surface")
        tools_top, tools_left, tools_width = chat_height, 0, width
    else:
        chat_width = width * 2 // 3  # 2fr and 1fr (the tool pane's min-width of 30 never binds here)
        out += _box(paint, 0, 0, main_height, chat_width, "Chat", "background")
        out += _box(paint, 0, chat_width, main_height, width - chat_width, "Tools", "surface")
        tools_top, tools_left, tools_width = 0, chat_width, width - chat_width
    if tools_width > 4 and main_height > 2:
        placeholder = _fit(NO_TOOL_CALLS, tools_width - 4)
        out.append(paint.at(tools_top + 1, tools_left + 2, placeholder, "text-muted", "surface"))
    inner = width - 4  # the prompt bar's padding, then the prompt's tall border
    if height >= 5 and inner > 2:
        top = height - 5
        out.append(paint.at(top, 1, "▊" + "▔" * inner + "▎", "primary", "surface"))
        out.append(paint.at(top + 1, 1, "▊", "primary", "surface")
                   + paint.at(top + 1, 2, " " + _fit(PROMPT_PLACEHOLDER, inner - 1), "text-muted", "surface")
                   + paint.at(top + 1, width - 2, "▎", "primary", "surface"))
        out.append(paint.at(top + 2, 1, "▊" + "▁" * inner + "▎", "primary", "surface"))
    if height >= 2:
        out.append(paint.at(height - 2, 0, " " + _fit(status, width - 2) + " ", "text", "panel"))
    out.append(paint.at(height - 1, 0, " " * width, "text", "footer-background"))
    return "".join(out) + "\x1b[0m"


def status_text(start: StartInfo, cwd: Path) -> str:
    """The status bar of the first frame, as :class:`~swebash_ai.frontends.tui.widgets.status.StatusBar` shows it."""
    profile = f" · profile {start.profile}" if start.profile else ""
    return f"{start.model or 'connecting…'}{profile}  {start.mode} mode  {short_path(cwd)}  0 tokens"


def _saved(state_dir: Path) -> dict[str, Any]:
    """The colours saved so far, by theme (empty when there is no readable file)."""
    try:
        saved = json.loads((state_dir / CACHE_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return saved if isinstance(saved, dict) else {}


def theme_colours(theme: str, themes_dir: Path, state_dir: Path) -> dict[str, tuple[int, int, int]]:
    """The colours of ``theme``: its file's, then those the app saved for it."""
    base: dict[str, Any] = {}
    for folder in (themes_dir, BUILTIN_THEMES):  # a user theme replaces a built-in of the same name
        path = folder / f"{theme}.toml"
        if path.is_file():
            try:
                base = tomllib.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                base = {}
            break
    saved = _saved(state_dir).get(theme)
    saved = saved if isinstance(saved, dict) else {}
    found: dict[str, tuple[int, int, int]] = {}
    for name, stand_in in COLOURS.items():
        rgb = _rgb(str(saved.get(name, ""))) or _rgb(str(base.get(stand_in, "")))
        if rgb is not None:
            found[name] = rgb
    return found


def save_colours(state_dir: Path, theme: str, variables: Mapping[str, str]) -> None:
    """Remember the theme's computed colours for the next early frame (only if they changed)."""
    wanted = {name: variables[name] for name in COLOURS if name in variables and _rgb(variables[name])}
    saved = _saved(state_dir)
    if saved.get(theme) == wanted:
        return
    saved[theme] = wanted
    path = state_dir / CACHE_NAME
    try:
        private_files.write_file(path, json.dumps(saved, indent=1, sort_keys=True).encode("utf-8"))
    except OSError as exc:  # only the next start's colours are at stake
        log.debug("cannot save %s: %s", path, exc)


class EarlyFrame:
    """The early frame on the terminal, until Textual takes over (:meth:`hand_over`) or it is undone."""

    def __init__(self, out: TextIO, tty_in: int, saved_attrs: list[Any] | None) -> None:
        self._out = out
        self._in = tty_in
        self._saved = saved_attrs
        self.handed_over = False
        self.closed = False

    @classmethod
    def draw(cls, start: StartInfo, cwd: Path, environ: Mapping[str, str] | None = None,
             out: TextIO | None = None, tty_in: int | None = None) -> EarlyFrame | None:
        """Draw the frame on ``out`` (standard error, where Textual draws), keys coming from ``tty_in``
        (standard input); ``None`` (nothing drawn) unless both are a terminal whose colours we know."""
        env = os.environ if environ is None else environ
        out = out or sys.__stderr__
        if out is None or os.name != "posix":
            return None
        mode = terminal_colours(env)
        try:
            if tty_in is None:
                if sys.__stdin__ is None:
                    return None
                tty_in = sys.__stdin__.fileno()
            if mode is None or not (out.isatty() and os.isatty(tty_in)):
                return None
            size = os.get_terminal_size(out.fileno())
        except (OSError, ValueError):
            return None
        colours = theme_colours(start.theme, start.locations.themes_dir, start.locations.state_dir)
        if any(name not in colours for name in COLOURS):
            return None  # a theme without its colours: Textual will report it; draw nothing rather than guess
        saved = _quiet_terminal(tty_in)
        frame = cls(out, tty_in, saved)
        try:
            out.write(ENTER + render(size.columns, size.lines, status=status_text(start, cwd),
                                     paint=Painter(colours, mode)))
            out.flush()
        except (OSError, ValueError):
            frame.close()
            return None
        return frame

    def hand_over(self) -> None:
        """Textual is taking the terminal: give it the terminal's settings as they were before us. What was
        typed meanwhile stays in the input queue for Textual to read."""
        if self.handed_over or self.closed:
            return
        self.handed_over = True
        _restore(self._in, self._saved, now=True)

    def close(self) -> None:
        """Undo the frame if Textual never took over (Textual leaves the screen itself when it did)."""
        if self.closed:
            return
        self.closed = True
        if self.handed_over:
            return
        with contextlib.suppress(OSError, ValueError):
            self._out.write(LEAVE)
            self._out.flush()
        _restore(self._in, self._saved, now=False)


def _quiet_terminal(fd: int) -> list[Any] | None:
    """Stop echo, line editing and the translation of Enter into a newline, as Textual's raw mode will
    (keys wait in the input queue as typed; Ctrl-C still interrupts); the previous settings."""
    try:
        import termios

        saved = termios.tcgetattr(fd)
        quiet = termios.tcgetattr(fd)
        quiet[0] &= ~(termios.ICRNL | termios.INLCR | termios.IGNCR | termios.IXON)
        quiet[3] &= ~(termios.ECHO | termios.ICANON)
        termios.tcsetattr(fd, termios.TCSANOW, quiet)
        return saved
    except Exception:  # termios.error, no termios: draw anyway, echo stays on
        return None


def _restore(fd: int, saved: list[Any] | None, *, now: bool) -> None:
    if saved is None:
        return
    import termios

    with contextlib.suppress(termios.error, OSError, ValueError):  # a closed terminal: nothing more to do
        termios.tcsetattr(fd, termios.TCSANOW if now else termios.TCSADRAIN, saved)


def driver_class(frame: EarlyFrame) -> type[Any]:
    """Textual's terminal driver, taking over the screen the early frame is on (import after Textual)."""
    from textual.drivers.linux_driver import LinuxDriver

    class HandOverDriver(LinuxDriver):
        _keep_screen = True

        def start_application_mode(self) -> None:
            frame.hand_over()
            super().start_application_mode()  # type: ignore[no-untyped-call]

        def write(self, data: str) -> None:
            # Already on the alternate screen: entering it again would clear the early frame, and the
            # screen would stay blank until Textual's first frame.
            if self._keep_screen and data == "\x1b[?1049h":
                self._keep_screen = False
                return
            super().write(data)

    return HandOverDriver
