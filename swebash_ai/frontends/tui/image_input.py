"""The TUI's side of images: a path pasted (or a file dropped) on the prompt, or the clipboard's image on
Ctrl+V, made into a chip above the prompt (:mod:`swebash_ai.frontends.tui.widgets.attachments`); the next
message takes the chips with it (``Controller.submit``).

A pasted path is read as an ``@mention`` is, through the session's guard
(:func:`~swebash_ai.agent.mentions.attach_image`); the clipboard's bytes go through
:func:`~swebash_ai.agent.images.image_attachment`. Both are downscaled for the session's provider.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from swebash_ai.agent.images import ImageAttachment
    from swebash_ai.frontends.tui.host import ControllerHost


async def attach_path(app: ControllerHost, path: str) -> None:
    """Worker: the image file a paste named, as a chip (or a notice saying why not)."""
    await app.session_ready.wait()
    session = app.session
    if session is None:
        return
    from swebash_ai.agent.mentions import attach_image

    _show(app, await asyncio.to_thread(attach_image, path, session.context, model=session.model))


async def paste_image(app: ControllerHost) -> None:
    """Worker for Ctrl+V: the clipboard's image as a chip; without one, the text paste Ctrl+V always did."""
    from swebash_ai.frontends.tui.clipboard import clipboard_image

    found = await clipboard_image()
    if isinstance(found, str):
        if getattr(app, "clipboard", ""):
            app.prompt.paste_text()
        else:
            app.notify(f"Ctrl+V: {found}.", timeout=6)
        return
    from swebash_ai.agent.images import ImageRefusal, image_attachment, limits_for

    data, kind = found
    bar = app.prompt.attachments
    name = f"clipboard-{len(bar.images) + 1 if bar is not None else 1}"
    model = app.session.model if app.session is not None else ""
    got = await asyncio.to_thread(image_attachment, data, kind, name=name, limits=limits_for(model))
    _show(app, got.notice if isinstance(got, ImageRefusal) else got)


def _show(app: ControllerHost, got: ImageAttachment | str) -> None:
    bar = app.prompt.attachments
    if isinstance(got, str):
        app.notify(got, severity="warning", timeout=8)
    elif bar is not None:
        bar.add(got)
