"""The editor's buffers: :class:`~swebash_ai.tools.editor_files.EditorFiles` over ``fs/read_text_file`` and
``fs/write_text_file``, for a client that says it can (``clientCapabilities.fs``).

The fs tools ask it only about a path their guard allowed, and take its answer as data: a text (scanned for
keys and secrets as a file's is), or nothing, and then the disk is read as without an editor. A client that
fails or takes too long is not asked again in this session: the disk serves from then on.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp.exceptions import RequestError

if TYPE_CHECKING:
    from swebash_ai.tools.registry import ToolContext

log = logging.getLogger(__name__)

ANSWER_WAIT = 30.0
"""Seconds the editor has to give or take a file's text."""


class ClientFiles:
    """Files read and written through one ACP session's client."""

    def __init__(self, conn: Any, session_id: str, *, can_read: bool, can_write: bool) -> None:
        self.conn = conn
        self.session_id = session_id
        self.can_read = can_read
        self.can_write = can_write

    async def read(self, path: Path) -> str | None:
        if not self.can_read:
            return None
        try:
            async with asyncio.timeout(ANSWER_WAIT):  # not wait_for: on 3.11 it can lose a cancel
                response = await self.conn.read_text_file(session_id=self.session_id, path=str(path))
        except (RequestError, ConnectionError, TimeoutError, ValueError) as exc:
            log.warning("swebash-ai acp: the editor did not give %s (%s); reading the disk from now on", path, exc)
            self.can_read = False
            return None
        content = getattr(response, "content", None)
        return content if isinstance(content, str) else None

    async def write(self, path: Path, text: str) -> None:
        try:
            async with asyncio.timeout(ANSWER_WAIT):
                await self.conn.write_text_file(session_id=self.session_id, path=str(path), content=text)
        except (RequestError, ConnectionError, TimeoutError, ValueError) as exc:
            self.can_write = False
            raise OSError(f"the editor did not take the change ({exc})") from exc


async def buffer_diff(ctx: ToolContext, tool: str, arguments: dict[str, Any]) -> list[Any] | None:
    """The diff of a ``write_file``/``edit_file`` call against the editor's buffer (old and new whole texts),
    for the permission request; ``None`` when the editor has no text to give (the arguments' diff is shown)."""
    from acp import schema

    from swebash_ai.safety.paths import PathRefused
    from swebash_ai.tools.editor_files import editor_bytes, editor_files
    from swebash_ai.tools.fs_write import planned_change

    editor = editor_files(ctx, "read")
    path = arguments.get("path")
    if editor is None or tool not in ("write_file", "edit_file") or not isinstance(path, str):
        return None
    if ctx.path_policy.check(path, "write", str(ctx.cwd)).decision == "deny":
        return None
    try:
        resolved = ctx.path_policy.resolve(path, str(ctx.cwd))
    except PathRefused:
        return None
    current = await editor_bytes(editor, resolved, ctx.settings.fs_max_size)
    planned = None if current is None else await planned_change(ctx, tool, arguments, current)
    if planned is None:
        return None
    old, new = planned
    return [schema.FileEditToolCallContent(
        type="diff", path=str(resolved), old_text=None if old is None else old.decode("utf-8", "replace"),
        new_text=new.decode("utf-8", "replace"))]
