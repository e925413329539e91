"""Where a conversation's images live: in memory while it runs, once on disk under their hash when it is saved.

Contract:
    A user message with images holds, under :data:`IMAGES`, one reference per image
    (:meth:`~swebash_ai.agent.images.ImageAttachment.reference`: name, mime, sha256, size), never the image.
    :class:`ImageStore` keeps the bytes of the images attached in this run; :meth:`ImageStore.save` writes each
    to ``attachments/<sha256>.<suffix>`` beside the session files (0600 in a 0700 folder, through
    :mod:`swebash_ai.storage.private_files`), once, however many messages or sessions refer to it; and
    :meth:`ImageStore.wire` makes the message the provider gets: its text, then one ``image_url`` part per
    image (a ``data:`` URL). A resumed session reads the image back from the folder and checks its hash; an
    image no longer there (or changed) goes out as a line of text saying so, never as an error.

Why:
    A screenshot is megabytes of base64: inline in the session file it would be rewritten at every save and
    read by every session listing, and it would land in every export. Only requests carry it; stats,
    telemetry and the audit log see the message's text and the reference at most.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swebash_ai.storage import private_files

if TYPE_CHECKING:
    from swebash_ai.agent.images import ImageAttachment

__all__ = ["ATTACHMENTS", "IMAGES", "ImageStore", "image_cost"]

IMAGES = "images"
"""Key of a user message's image references. Kept in the saved session; on the wire, image parts."""
ATTACHMENTS = "attachments"
"""The folder, beside the session files, that holds their images."""

_SUFFIX = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}
_READ_CAP = 64 * 1024 * 1024


def image_cost(refs: Any) -> int:
    """Estimated prompt tokens of a message's images (see :func:`~swebash_ai.agent.images.image_tokens`)."""
    if not isinstance(refs, list):
        return 0
    from swebash_ai.agent.images import image_tokens

    return sum(image_tokens(int(r.get("width") or 0), int(r.get("height") or 0)) for r in refs if isinstance(r, dict))


def _file_name(ref: dict[str, Any]) -> str | None:
    digest, suffix = ref.get("sha256"), _SUFFIX.get(str(ref.get("mime")))
    if not isinstance(digest, str) or len(digest) != 64 or suffix is None:
        return None
    try:
        int(digest, 16)
    except ValueError:
        return None
    return f"{digest}.{suffix}"


class ImageStore:
    """The images of one conversation (see the module docstring)."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder
        """The session folder's :data:`ATTACHMENTS` (set when the session is loaded or saved)."""
        self._data: dict[str, bytes] = {}
        self._pending: list[ImageAttachment] = []
        self._saved: set[str] = set()

    def attach_to_next(self, images: Sequence[ImageAttachment]) -> None:
        """The images the next typed user message carries (``Session.run`` sets them before each attempt)."""
        self._pending = list(images)

    def take_pending(self) -> list[dict[str, Any]]:
        """References of the pending images, whose bytes are kept from now on."""
        pending, self._pending = self._pending, []
        for image in pending:
            self._data.setdefault(image.sha256, image.data)
        return [image.reference() for image in pending]

    def save(self, folder: Path, messages: Sequence[dict[str, Any]]) -> None:
        """Write every image the messages refer to and this run holds, once (named by its hash: never rewritten)."""
        self.folder = folder
        for message in messages:
            for ref in message.get(IMAGES) or ():
                name = _file_name(ref) if isinstance(ref, dict) else None
                data = self._data.get(str(ref.get("sha256"))) if name else None
                if name is None or data is None or name in self._saved:
                    continue
                target = folder / name
                if not target.exists():
                    private_files.write_file(target, data)
                self._saved.add(name)

    def load(self, ref: dict[str, Any]) -> bytes | None:
        """An image's bytes: held in memory, or read back from the folder and checked against its hash."""
        digest = str(ref.get("sha256"))
        if digest in self._data:
            return self._data[digest]
        name = _file_name(ref)
        if name is None or self.folder is None:
            return None
        try:  # our own 0700 folder; a link planted in it is still not followed
            fd = os.open(self.folder / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as fh:
                data = fh.read(_READ_CAP)
        except OSError:
            return None
        import hashlib  # a resumed session's images only

        if hashlib.sha256(data).hexdigest() != digest:
            return None
        self._data[digest] = data
        return data

    def wire(self, wire: dict[str, Any], refs: Any) -> dict[str, Any]:
        """``wire`` (the message without our keys) with its images as content parts after the text."""
        import base64

        parts: list[dict[str, Any]] = []
        text = wire.get("content")
        if isinstance(text, str) and text:
            parts.append({"type": "text", "text": text})
        for ref in refs if isinstance(refs, list) else ():
            if not isinstance(ref, dict):
                continue
            data = self.load(ref)
            if data is None:
                parts.append({"type": "text", "text": f"[The image {ref.get('name', '')} is no longer stored; "
                                                      "it is not sent again.]"})
                continue
            url = f"data:{ref.get('mime')};base64,{base64.b64encode(data).decode('ascii')}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
        return {**wire, "content": parts}
