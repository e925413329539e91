"""The editor's copy of the files: ``ctx.services["editor_files"]``, set by a front end that runs inside an
editor (``swebash-ai acp`` when the client offers ``fs/read_text_file`` and ``fs/write_text_file``).

Contract:
    ``read_file`` reads, and ``write_file``/``edit_file`` start from and write to, the editor's text of a file
    (the person's unsaved buffer; the change lands in the editor, with its undo) instead of the disk. Only
    the file's bytes change hands: every tool checks the path guard first and asks this service about the
    resolved path only once the guard allowed it, the file must exist on disk as a regular file within the
    size limit, the text read is scanned for keys and secrets as a file's is, a write is recorded for undo
    first. An answer is data, never a decision: no answer (``None``), an error or a text over the limit is
    the disk's turn, never a wider policy. The core stays headless: the service is a protocol here, built by
    the front end.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from swebash_ai.tools.registry import ToolContext

log = logging.getLogger(__name__)

SERVICE = "editor_files"


class EditorFiles(Protocol):
    """What the fs tools ask an editor."""

    can_read: bool
    can_write: bool

    async def read(self, path: Path) -> str | None:
        """The editor's text of ``path`` (absolute, checked by the guard); ``None`` when it has none to give."""

    async def write(self, path: Path, text: str) -> None:
        """Put ``text`` in the editor's copy of ``path`` (absolute, checked, approved).

        Raises:
            OSError: the editor did not take it (nothing was written).
        """


def editor_files(ctx: ToolContext, want: Literal["read", "write"]) -> EditorFiles | None:
    """The session's editor, when there is one that can ``want``."""
    editor = ctx.services.get(SERVICE)
    if editor is None or not (editor.can_read if want == "read" else editor.can_write):
        return None
    return editor  # type: ignore[no-any-return]


async def editor_bytes(editor: EditorFiles | None, resolved: Path, limit: int) -> bytes | None:
    """The editor's text of a regular file the guard allowed, as bytes; ``None``: read the disk (no editor, no
    answer, a failure, a file that is not a regular one on disk, or a text over ``limit``)."""
    if editor is None or not editor.can_read:
        return None
    try:
        if not _regular_within(resolved, limit):
            return None
        text = await editor.read(resolved)
    except Exception as exc:  # the editor's failure is the disk's turn, never the tool's
        log.info("the editor did not give %s (%s): read from disk", resolved, exc)
        return None
    if not isinstance(text, str):
        return None
    data = text.encode("utf-8", "surrogateescape")
    return data if len(data) <= limit else None


def _regular_within(path: Path, limit: int) -> bool:
    """A regular file (not a link to one) of at most ``limit`` bytes on disk."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_size <= limit
