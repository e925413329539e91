"""The images waiting to go with the next message, shown as chips above the prompt.

An image gets here from the clipboard (Ctrl+V, :mod:`swebash_ai.frontends.tui.clipboard`) or from a pasted path
to an image file (what a terminal types when a file is dropped on it), always already through
:func:`~swebash_ai.agent.images.image_attachment` (and, for a path, the guard of every mention). A chip is
removed by clicking it (or Enter on it), or by Backspace in the empty prompt (the last one); the message sent
takes them all (:meth:`AttachmentBar.take`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from textual.containers import Horizontal
from textual.widgets import Button

from swebash_ai.safety.terminal_text import safe

if TYPE_CHECKING:
    from swebash_ai.agent.images import ImageAttachment

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")  # agent.images.IMAGE_SUFFIXES, without loading it


class AttachmentChip(Button):
    """One image: its name and size; pressing it removes it."""

    def __init__(self, image: ImageAttachment) -> None:
        # 📎, not 🖼: terminals draw 🖼 (an emoji with a text presentation) one or two columns wide while
        # Textual counts one, which put the chip's edge a column off; 📎 is two columns everywhere.
        label = f"📎 {safe(image.name, visible=True)} ({image.width}×{image.height}) ✕"
        super().__init__(label, compact=True, classes="attachment-chip", tooltip="Remove this image")
        self.image = image


class AttachmentBar(Horizontal):
    """The chips (hidden while there is none)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.images: list[ImageAttachment] = []

    def on_mount(self) -> None:
        self.display = False

    def add(self, image: ImageAttachment) -> None:
        if any(kept.sha256 == image.sha256 for kept in self.images):
            return
        self.images.append(image)
        self.mount(AttachmentChip(image))
        self.display = True

    def remove_image(self, image: ImageAttachment) -> None:
        for chip in self.query(AttachmentChip):
            if chip.image is image:
                chip.remove()
        self.images = [kept for kept in self.images if kept is not image]
        self.display = bool(self.images)

    def remove_last(self) -> bool:
        if not self.images:
            return False
        self.remove_image(self.images[-1])
        return True

    def take(self) -> list[ImageAttachment]:
        """The images, for the message being sent; the bar is empty after."""
        taken, self.images = self.images, []
        self.remove_children()
        self.display = False
        return taken

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if isinstance(event.button, AttachmentChip):
            event.stop()
            self.remove_image(event.button.image)


def pasted_image_path(text: str, cwd: Any) -> str | None:
    """The image file a paste names, when the whole paste is one path to an existing image file: plain,
    quoted or escaped as terminals type a dropped file (``'/a b.png'``, ``/a\\ b.png``), or a ``file://`` URI;
    ``None`` for anything else (it is pasted as text)."""
    value = text.strip()
    if not value or "\n" in value or len(value) > 4096:
        return None
    if len(value) > 1 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    elif value.startswith("file://"):
        value = unquote(urlparse(value).path)
    else:
        value = value.replace("\\ ", " ")
    if not value.lower().endswith(IMAGE_SUFFIXES):
        return None
    full = os.path.expanduser(value)
    full = full if os.path.isabs(full) else os.path.join(str(cwd), full)
    return value if os.path.isfile(full) else None
