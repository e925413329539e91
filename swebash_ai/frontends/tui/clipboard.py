"""The image on the system clipboard, where a program can read it.

A terminal passes text to the app (bracketed paste), never an image. So Ctrl+V asks the clipboard itself, with
the program the desktop provides: ``wl-paste`` under Wayland (``WAYLAND_DISPLAY``), ``xclip`` under X11
(``DISPLAY``), ``pngpaste`` on macOS. Each runs through the one place that starts processes
(:func:`~swebash_ai.tools.process.run_program`): a fixed argument list (no shell, nothing from the user or the
model), stdin from ``/dev/null``, its own session, an environment of the few variables a display needs, and a
time limit of :data:`TIMEOUT` seconds. Over SSH, or with none of them installed, there is no clipboard to
read: the answer says so, and Ctrl+V pastes text as before.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from pathlib import Path

__all__ = ["TIMEOUT", "clipboard_image"]

TIMEOUT = 3.0
_TYPES = ("image/png", "image/jpeg", "image/webp", "image/gif")
_DISPLAY_VARIABLES = ("PATH", "HOME", "DISPLAY", "XAUTHORITY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR")


async def clipboard_image() -> tuple[bytes, str] | str:
    """(the image's bytes, the type the clipboard names) or, when there is none, why (one line for the user)."""
    if os.environ.get("WAYLAND_DISPLAY") and (program := shutil.which("wl-paste")):
        kind = _first_image_type(await _run(program, "--list-types"))
        if kind is None:
            return "the clipboard holds no image"
        return _image(kind, await _run(program, "--no-newline", "--type", kind))
    if os.environ.get("DISPLAY") and (program := shutil.which("xclip")):
        kind = _first_image_type(await _run(program, "-selection", "clipboard", "-t", "TARGETS", "-o"))
        if kind is None:
            return "the clipboard holds no image"
        return _image(kind, await _run(program, "-selection", "clipboard", "-t", kind, "-o"))
    if sys.platform == "darwin" and (program := shutil.which("pngpaste")):
        return _image("image/png", await _run(program, "-"))
    return ("no clipboard program here to read an image from (wl-paste under Wayland, xclip under X11, pngpaste on "
            "macOS); save the image and paste or @mention its path")


def _first_image_type(offered: bytes | None) -> str | None:
    names = (offered or b"").decode("utf-8", "replace").split()
    return next((kind for kind in _TYPES if kind in names), None)


def _image(kind: str, data: bytes | None) -> tuple[bytes, str] | str:
    return (data, kind) if data else "the clipboard's image could not be read"


async def _run(*argv: str) -> bytes | None:
    from swebash_ai.errors import ToolError
    from swebash_ai.tools.process import run_program

    env = {name: os.environ[name] for name in _DISPLAY_VARIABLES if name in os.environ}
    try:
        return await asyncio.to_thread(run_program, argv, env=env, cwd=Path.home(), timeout=TIMEOUT)
    except ToolError:
        return None
