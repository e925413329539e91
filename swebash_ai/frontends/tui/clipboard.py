"""The image on the system clipboard, where a program can read it.

A terminal passes text to the app (bracketed paste), never an image. So Ctrl+V asks the clipboard itself, with
the program the desktop provides: ``wl-paste`` under Wayland (``WAYLAND_DISPLAY``), ``xclip`` under X11
(``DISPLAY``), ``pngpaste`` on macOS. Each runs with a fixed argument list (no shell, nothing from the user or
the model), no input, a time limit of :data:`TIMEOUT` seconds and its output capped at the image file limit.
Over SSH, or with none of them installed, there is no clipboard to read: the answer says so, and Ctrl+V pastes
text as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys

__all__ = ["TIMEOUT", "clipboard_image"]

TIMEOUT = 3.0
_TYPES = ("image/png", "image/jpeg", "image/webp", "image/gif")


async def clipboard_image() -> tuple[bytes, str] | str:
    """(the image's bytes, the type the clipboard names) or, when there is none, why (one line for the user)."""
    if os.environ.get("WAYLAND_DISPLAY") and (program := shutil.which("wl-paste")):
        offered = await _run(program, "--list-types")
        kind = _first_image_type(offered)
        if kind is None:
            return "the clipboard holds no image"
        return await _image(kind, program, "--no-newline", "--type", kind)
    if os.environ.get("DISPLAY") and (program := shutil.which("xclip")):
        offered = await _run(program, "-selection", "clipboard", "-t", "TARGETS", "-o")
        kind = _first_image_type(offered)
        if kind is None:
            return "the clipboard holds no image"
        return await _image(kind, program, "-selection", "clipboard", "-t", kind, "-o")
    if sys.platform == "darwin" and (program := shutil.which("pngpaste")):
        return await _image("image/png", program, "-")
    return ("no clipboard program here to read an image from (wl-paste under Wayland, xclip under X11, pngpaste on "
            "macOS); save the image and paste or @mention its path")


def _first_image_type(offered: bytes | None) -> str | None:
    names = (offered or b"").decode("utf-8", "replace").split()
    return next((kind for kind in _TYPES if kind in names), None)


async def _image(kind: str, *argv: str) -> tuple[bytes, str] | str:
    data = await _run(*argv)
    return (data, kind) if data else "the clipboard's image could not be read"


async def _run(*argv: str) -> bytes | None:
    from swebash_ai.agent.images import MAX_IMAGE_FILE

    try:
        process = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL)
    except OSError:
        return None
    assert process.stdout is not None
    try:
        data = await asyncio.wait_for(_read_capped(process.stdout, MAX_IMAGE_FILE + 1), TIMEOUT)
        if len(data) > MAX_IMAGE_FILE:  # over the limit: image_attachment says so; the rest is not waited for
            with contextlib.suppress(ProcessLookupError):
                process.kill()
        await asyncio.wait_for(process.wait(), TIMEOUT)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        return None
    return data if process.returncode == 0 or len(data) > MAX_IMAGE_FILE else None


async def _read_capped(stream: asyncio.StreamReader, cap: int) -> bytes:
    data = bytearray()
    while len(data) < cap and (block := await stream.read(min(65536, cap - len(data)))):
        data += block
    return bytes(data)
